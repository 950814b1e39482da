// The layout docs/architecture.md draws, held by reading the sources: no import cycles, in the
// server or in the browser code; transport-neutral code never reaches into a transport; notices
// are recorded on the transaction object by notify() alone, handed on by the transaction runners
// after the commit, and published to sockets by the outlets alone; nothing keeps per-transaction
// state in a WeakMap beside the transaction object; deliveries are inserted by the outbox alone;
// the chat clients' commands serve a REST route and the socket handlers alike; what the server
// and the browser bundles share (src/contracts/) imports nothing, and is all the browser code
// takes from src/.
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

/** The files of src/ whose text matches `pattern`, but for those named by `allowed`. */
function filesMatching(pattern: RegExp, allowed: RegExp): string[] {
  return sources()
    .map((file) => [relative(file), readFileSync(file, 'utf8')] as const)
    .filter(([name, text]) => !allowed.test(name) && pattern.test(text))
    .map(([name]) => name);
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
      /^(commands|conversations|tenancy|deliveries|push|email|media|presenters|db|security|setup|audit|contracts)\/|^(addresses|config|errors|limits|logger|metrics|sweeper|validation)\.ts$/;
    const transport = /^(http|api|realtime)\//;
    const crossings = [...graph].flatMap(([from, targets]) =>
      neutral.test(from) ? targets.filter((to) => transport.test(to)).map((to) => `${from} → ${to}`) : [],
    );
    expect(crossings).to.deep.equal([]);
  });

  it("has the chat clients' commands used alike by a REST route and the socket handlers", () => {
    const commands = [...graph.keys()].filter((name) => name.startsWith('commands/client/') && name !== 'commands/client/input.ts');
    expect(commands).to.not.be.empty;
    const unshared = commands.filter((command) => {
      const importers = [...graph].filter(([, targets]) => targets.includes(command)).map(([from]) => from);
      const rest = importers.filter((from) => /^api\/client\//.test(from) && from !== 'api/client/socket-events.ts');
      return rest.length === 0 || !importers.includes('api/client/socket-events.ts');
    });
    expect(unshared).to.deep.equal([]);
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
    expect(filesMatching(/\.publish\(|messageCreated\(/, /^db\/tx\/outlets\.ts$|^realtime\/gateway\.ts$/)).to.deep.equal([]);
  });

  it('records notices through notify() alone, and hands them on from the transaction runners after the commit', () => {
    expect(filesMatching(/\.notices\.push\(/, /^conversations\/notices\.ts$/)).to.deep.equal([]);
    expect(filesMatching(/\boutlets(?:Of\([^)]*\))?\.deliver\(/, /^db\/tx\/(run|group-commit)\.ts$/)).to.deep.equal([]);
  });

  it('keeps what a transaction carries on the transaction object: no WeakMap keyed by a transaction or an EntityManager', () => {
    expect(filesMatching(/new WeakMap<\s*[\w.]*(?:EntityManager|Transaction)\b/, /^$/)).to.deep.equal([]);
  });

  it('inserts deliveries from the outbox alone (deliveries/outbox.ts, its statements in deliveries/sql/)', () => {
    const statements = sources()
      .filter((file) => /insert\s+into\s+deliveries\b/i.test(readFileSync(file, 'utf8')))
      .map(relative)
      .filter((name) => !name.startsWith('db/migrations/'));
    expect(statements.filter((name) => !name.startsWith('deliveries/sql/'))).to.deep.equal([]);
    const builders = statements.flatMap((name) =>
      [...readFileSync(path.join(SRC, name), 'utf8').matchAll(/export function (\w+)/g)].map((m) => m[1]!),
    );
    expect(builders).to.not.be.empty;
    const callers = builders.flatMap((builder) =>
      filesMatching(new RegExp(`\\b${builder}\\(`), /^deliveries\/(outbox\.ts|sql\/)/).map((name) => `${name} → ${builder}`),
    );
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
