// Requests Node's HTTP parser refuses before Koa sees them (headers over the 16 KB limit, a
// request line that does not parse) would otherwise get Node's bare status line. They are
// answered in the envelope every other refusal uses, then the connection is closed: after a
// parse error nothing more can be read from it.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { buildEnvelope } from '../presenters/envelope.ts';

const REFUSALS: Record<string, [status: number, code: string, reason: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'Request Header Fields Too Large'],
  HPE_URI_TOO_LONG: [414, 'uri_too_long', 'URI Too Long'],
};

export function answerClientErrors(http: Server): void {
  http.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset or timed out has nobody left to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, code, reason] = REFUSALS[err.code ?? ''] ?? [400, 'bad_request', 'Bad Request'];
    const body = JSON.stringify(
      buildEnvelope({ path: '/', method: '', startedAt: process.hrtime.bigint() }, false, {
        notifications: [{ type: 'error', message: code }],
      }),
    );
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
