// A real SMTP server on loopback for the email tests (smtp-server), which parses what it
// receives with mailparser. It can be stopped and started again on the same port (an outage),
// and told to drop the connection after taking a message, before its answer (a lost reply).
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  parsed: ParsedMail;
  raw: Buffer;
}

export class SmtpStandIn {
  readonly received: ReceivedMail[] = [];
  /** Take the next messages whole, then drop the connection instead of answering 250. */
  dropAfterData = 0;
  /** Addresses refused at RCPT TO with 550 (a permanent refusal). */
  readonly refused = new Set<string>();
  private server: SMTPServer | undefined;
  port = 0;

  static async start(): Promise<SmtpStandIn> {
    const smtp = new SmtpStandIn();
    await smtp.listen();
    return smtp;
  }

  async listen(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        if (!this.refused.has(address.address)) return callback();
        callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks);
          void simpleParser(raw).then((parsed) => {
            const envelope = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            };
            this.received.push({ envelope, parsed, raw });
            if (this.dropAfterData > 0) {
              this.dropAfterData -= 1;
              // The message is here, but the client never hears so: it must try again.
              for (const connection of (server as unknown as { connections: Set<{ _socket: { destroy(): void } }> }).connections) {
                connection._socket.destroy();
              }
              return;
            }
            callback();
          });
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    server.on('error', () => undefined);
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    // Open connections are cut too: the outage is whole.
    for (const connection of (server as unknown as { connections: Set<{ _socket: { destroy(): void } }> }).connections) {
      connection._socket.destroy();
    }
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  to(address: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.envelope.to.includes(address));
  }
}

/** Palaver's email settings for tests that send through this stand-in: an answer unseen for a second goes by email. */
export function emailThrough(smtp: SmtpStandIn) {
  return {
    unseenAfterSeconds: 1,
    linkSecret: 'a test secret that is long enough to sign links',
    smtp: { host: '127.0.0.1', port: smtp.port, from: 'Support <support@palaver.test>', timeoutMs: 5000 },
  };
}
