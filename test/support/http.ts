// A small HTTP client for tests: real requests over loopback, answers parsed as the envelope.
import type { Envelope } from '../../src/presenters/envelope.ts';

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: Envelope & { data: T };
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A raw body sent as it is (for malformed input); otherwise `json` is serialised. */
  raw?: string | Buffer;
  json?: unknown;
  token?: string;
}

export async function request<T = unknown>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined = options.raw;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(new URL(path, baseUrl), { method, headers, body });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (e.g. /metrics); callers use `text`.
  }
  return { status: response.status, headers: response.headers, body: parsed as Envelope & { data: T }, text };
}

/** Binds the client to one server. */
export function client(baseUrl: string) {
  return {
    get: <T = unknown>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'GET', path, options),
    post: <T = unknown>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'POST', path, options),
    put: <T = unknown>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'PUT', path, options),
    patch: <T = unknown>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'PATCH', path, options),
    delete: <T = unknown>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'DELETE', path, options),
  };
}

export type Client = ReturnType<typeof client>;
