// The layout docs/architecture.md draws, held by reading the sources' imports: no import
// cycles; transport-neutral code never reaches into a transport; sockets hear of changes only
// through the notice module.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const SRC = path.resolve(import.meta.dirname, '..', 'src');

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const relative = (file: string) => path.relative(SRC, file).split(path.sep).join('/');

/** Every relative import of every source file, type-only ones included (they tie modules too). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources()) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g)].map((m) =>
      relative(path.resolve(path.dirname(file), m[1]!)),
    );
    graph.set(relative(file), targets);
  }
  return graph;
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe('architecture', () => {
  const graph = importGraph();

  it('has no import cycles', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' → '))).to.deep.equal([]);
  });

  it('keeps transport-neutral code out of the transports', () => {
    const neutral =
      /^(commands|conversations|tenancy|deliveries|push|email|media|presenters|db|security|setup)\/|^(errors|limits|validation)\.ts$/;
    const transport = /^(http|api|realtime)\//;
    const crossings = [...graph].flatMap(([from, targets]) =>
      neutral.test(from) ? targets.filter((to) => transport.test(to)).map((to) => `${from} → ${to}`) : [],
    );
    expect(crossings).to.deep.equal([]);
  });

  it('keeps the ORM out of the routes: they call commands and reads of the transport-neutral modules', () => {
    const callers = sources()
      .map((file) => [relative(file), readFileSync(file, 'utf8')] as const)
      .filter(
        ([name, text]) =>
          /^api\//.test(name) && /\bem\.(find|count|create|persist|remove|nativeDelete|nativeUpdate)\w*\(|Schema, \{/.test(text),
      )
      .map(([name]) => name);
    expect(callers).to.deep.equal([]);
  });

  it('publishes to sockets from the notice module alone', () => {
    const callers = sources()
      .map((file) => [relative(file), readFileSync(file, 'utf8')] as const)
      .filter(
        ([name, text]) => !/^conversations\/notices\.ts$|^realtime\/gateway\.ts$/.test(name) && /\.publish\(|messageCreated\(/.test(text),
      )
      .map(([name]) => name);
    expect(callers).to.deep.equal([]);
  });
});
