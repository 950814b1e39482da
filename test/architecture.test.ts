// The layout docs/architecture.md draws, held by reading the sources' imports: no import
// cycles, in the server or in the browser code; transport-neutral code never reaches into a
// transport; sockets hear of changes only through the notice module; what the server and the
// browser bundles share (src/contracts/) imports nothing, and is all the browser code takes from src/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
const WEB = path.join(ROOT, 'web');

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const relativeTo = (base: string, file: string) => path.relative(base, file).split(path.sep).join('/');
const relative = (file: string) => relativeTo(SRC, file);

/** Every import of a file, type-only ones included (they tie modules too), as written. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]!);
}

/** Every relative import of every file under `dir`, named relative to `base`. */
function importGraph(dir = SRC, base = SRC): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(dir)) {
    const targets = specifiers(file)
      .filter((s) => s.startsWith('./') || s.startsWith('../'))
      .map((s) => relativeTo(base, path.resolve(path.dirname(file), s)));
    graph.set(relativeTo(base, file), targets);
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
      /^(commands|conversations|tenancy|deliveries|push|email|media|presenters|db|security|setup|audit)\/|^(errors|limits|validation)\.ts$/;
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

  it('publishes to sockets from the outlets of committed transactions alone', () => {
    const callers = sources()
      .map((file) => [relative(file), readFileSync(file, 'utf8')] as const)
      .filter(([name, text]) => !/^db\/tx\/outlets\.ts$|^realtime\/gateway\.ts$/.test(name) && /\.publish\(|messageCreated\(/.test(text))
      .map(([name]) => name);
    expect(callers).to.deep.equal([]);
  });

  it('keeps deps.ts a type: what the composition root (server.ts) builds, with no code of its own', () => {
    const text = readFileSync(path.join(SRC, 'deps.ts'), 'utf8');
    const valueImports = [...text.matchAll(/(?:^|\n)\s*import\s+(?!type\b)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]);
    expect(valueImports).to.deep.equal([]);
    expect(text).to.not.match(/^export (?!interface|type)/m);
  });

  it('keeps what the server and the browser share free of imports (src/contracts/)', () => {
    const contracts = sources(path.join(SRC, 'contracts'));
    expect(contracts).to.not.be.empty;
    const imports = contracts.flatMap((file) =>
      specifiers(file)
        .filter((s) => !/^\.\/[\w-]+\.ts$/.test(s))
        .map((s) => `${relative(file)} → ${s}`),
    );
    expect(imports).to.deep.equal([]);
  });

  describe('the browser code (web/)', () => {
    const web = importGraph(WEB, ROOT);

    it('has no import cycles', () => {
      expect(web.size).to.be.greaterThan(0);
      expect(cycles(web).map((cycle) => cycle.join(' → '))).to.deep.equal([]);
    });

    it('takes nothing from the server but src/contracts/', () => {
      const crossings = [...web].flatMap(([from, targets]) =>
        targets.filter((to) => !to.startsWith('web/') && !to.startsWith('src/contracts/')).map((to) => `${from} → ${to}`),
      );
      expect(crossings).to.deep.equal([]);
    });
  });
});
