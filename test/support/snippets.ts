// Fenced code blocks of the Markdown documents that are marked to be run by the tests:
// ```sh test (bash, run in order, one script per document) and ```js test (Node, an ES module).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface Snippet {
  /** The info string's language: `sh` or `js`. */
  language: string;
  /** The line of the opening fence, from 1. */
  line: number;
  code: string;
}

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/** README.md, CONTRIBUTING.md and every docs/**\/*.md, as paths relative to the repository. */
export function markdownDocuments(): string[] {
  const found: string[] = ['README.md', 'CONTRIBUTING.md'].filter((name) => {
    try {
      readFileSync(path.join(repoRoot, name));
      return true;
    } catch {
      return false;
    }
  });
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
      const relative = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) found.push(relative);
    }
  };
  walk('docs');
  return found.sort();
}

/** Blocks whose info string is `<language> test` (other words after `test` are allowed). */
export function testedSnippets(markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(`{3,}|~{3,})\s*(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const [, fence = '```', language = '', rest = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j] ?? '').startsWith(fence)) body.push(lines[j++] ?? '');
    if (/^test\b/.test(rest.trim())) snippets.push({ language, line: i + 1, code: body.join('\n') });
    i = j;
  }
  return snippets;
}

export interface RunResult {
  code: number | null;
  output: string;
}

export interface Started {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr together. */
  output(): string;
  exited: Promise<RunResult>;
}

/** Starts a program, stdout and stderr together, killed after `timeoutMs`. */
export function start(
  command: string,
  args: string[],
  options: { input?: string; env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number },
): Started {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => {
    output += `\n(killed after ${options.timeoutMs} ms)`;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  const exited = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  child.stdin?.end(options.input ?? '');
  return { child, output: () => output, exited };
}

/** Runs a program to its end. */
export function run(
  command: string,
  args: string[],
  options: { input?: string; env: NodeJS.ProcessEnv; cwd: string; timeoutMs: number },
): Promise<RunResult> {
  return start(command, args, options).exited;
}

const MARK = '#palaver-snippet';

/**
 * One bash script of a document's `sh test` blocks, in order, so variables carry from block to
 * block; a line before each block lets a failure be traced to its block.
 */
export function shellScript(snippets: Snippet[], rewrite: (code: string) => string): string {
  return snippets.map((snippet, index) => `printf '\\n${MARK} ${index}\\n'\n${rewrite(snippet.code)}\n`).join('');
}

/** Which block a failed script stopped in, and what that block printed. */
export function failedBlock(snippets: Snippet[], output: string): { snippet: Snippet | undefined; output: string } {
  const marks = [...output.matchAll(new RegExp(`^${MARK} (\\d+)$`, 'gm'))];
  const last = marks[marks.length - 1];
  if (!last || last.index === undefined) return { snippet: snippets[0], output };
  return { snippet: snippets[Number(last[1])], output: output.slice(last.index + last[0].length + 1) };
}
