// The one element builder of Palaver's browser code (the widget and the dashboard build their DOM
// with it; there is no virtual DOM to keep in sync). Text is always text: nothing a server, an
// operator or a visitor wrote ever becomes markup.
export type Child = Node | string | number | null | undefined | false;
type Listener = (event: Event) => void;
/** Attributes by name (true: present and empty; null, undefined, false: absent), `on…` listeners, and `value`. */
export type Props = Record<string, string | number | boolean | Listener | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (name === 'value') (element as HTMLInputElement).value = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `parent` shows. */
export function show(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}
