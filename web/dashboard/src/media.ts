// Files of a conversation, shown rather than named. The Admin API serves them only to the
// operator's bearer token, which an <img src> or a plain link cannot send, so the page fetches
// each file and shows it from an object URL (the CSP allows blob: images and nothing wider).
import { download } from './api.ts';
import { h } from './dom.ts';
import type { ChatMedia } from './types.ts';
import { errorText } from './ui.ts';

interface Loaded {
  url: string;
  /** As uploaded (the answer's Content-Disposition), else the stored file's name. */
  name: string;
  size: number;
}

export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/**
 * The files of one page's conversations, each fetched once: the view is drawn again at every
 * live change, and must not download its files again each time.
 */
export class ConversationFiles {
  private readonly files = new Map<string, Promise<Loaded>>();

  constructor(private readonly accountId: number) {}

  /**
   * An image inline (a link opens it full size); another file as a button that fetches it when
   * asked: a video or an archive can be tens of megabytes, and a message does not say its size.
   */
  view(media: ChatMedia): HTMLElement {
    if (!media.mimeType.startsWith('image/')) return this.fileButton(media);
    const box = h('div', { class: 'file' }, `Loading ${media.description ?? media.filename}…`);
    this.load(media).then(
      (file) => box.replaceChildren(image(file, media)),
      (err: unknown) => {
        box.classList.add('failed');
        box.textContent = `${media.description ?? media.filename} could not be loaded: ${errorText(err)}`;
      },
    );
    return box;
  }

  private fileButton(media: ChatMedia): HTMLElement {
    const name = media.description ?? media.filename;
    const button = h('button', { type: 'button', class: 'secondary small' }, `Download ${name}`);
    const note = h('span', { class: 'hint', role: 'status' });
    button.addEventListener('click', () => {
      button.disabled = true;
      note.textContent = ' Downloading…';
      this.load(media)
        .then(
          (file) => {
            // A link the browser follows as a download, under the name it was uploaded with.
            const save = h('a', { href: file.url, download: file.name, hidden: true });
            document.body.append(save);
            save.click();
            save.remove();
            note.textContent = ` Downloaded as ${file.name} (${formatSize(file.size)})`;
          },
          (err: unknown) => {
            note.textContent = ` Could not be loaded: ${errorText(err)}`;
          },
        )
        .finally(() => {
          button.disabled = false;
        });
    });
    return h('div', { class: 'file' }, button, note);
  }

  /** Gives the object URLs back: run when the page is left. */
  release(): void {
    for (const file of this.files.values()) void file.then((f) => URL.revokeObjectURL(f.url)).catch(() => undefined);
    this.files.clear();
  }

  private load(media: ChatMedia): Promise<Loaded> {
    const path = `/accounts/${this.accountId}/media/${media.year}/${media.month}/${media.day}/${media.filename}`;
    let file = this.files.get(path);
    if (!file) {
      file = download(path).then(({ blob, filename }) => ({
        url: URL.createObjectURL(blob),
        name: filename ?? media.filename,
        size: blob.size,
      }));
      // A failure is not kept: the next drawing of the view tries again.
      file.catch(() => this.files.delete(path));
      this.files.set(path, file);
    }
    return file;
  }
}

function image(file: Loaded, media: ChatMedia): HTMLElement {
  const caption = media.description && media.description !== file.name ? media.description : null;
  return h(
    'figure',
    { class: 'media-image' },
    h('a', { href: file.url, target: '_blank', title: `Open ${file.name} full size` }, h('img', { src: file.url, alt: file.name })),
    caption ? h('figcaption', {}, caption) : null,
  );
}
