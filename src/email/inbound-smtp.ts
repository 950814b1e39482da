// The SMTP listener of replies by email (off unless `email.inbound.smtp.enabled`): the MX of
// `email.inbound.domain` points here. It takes mail only for signed reply addresses, refusing
// any other recipient at RCPT (550), so forged or altered addresses never get their message in;
// announces and enforces `email.inbound.maxBytes` (SIZE, 552); takes no AUTH (it is a mail
// exchanger, not a relay); offers STARTTLS when a key and certificate are configured. The
// message goes to InboundMail; an outage of the database answers 451, so the sending server
// tries again later, and a customer over their rate limit is told 452 likewise.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Logger } from '../logger.ts';
import type { InboundMail } from './inbound.ts';

export interface InboundSmtpOptions {
  host: string;
  port: number;
  domain: string;
  tlsKeyFile?: string | undefined;
  tlsCertFile?: string | undefined;
}

/** Recipients of one message: more is not a reply. */
const MAX_RECIPIENTS = 5;

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export class InboundSmtpListener {
  private server: SMTPServer | undefined;
  port = 0;

  constructor(
    private readonly inbound: InboundMail,
    private readonly options: InboundSmtpOptions,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const { options, inbound, logger } = this;
    const tls = options.tlsKeyFile && options.tlsCertFile;
    const settings: SMTPServerOptions = {
      name: options.domain,
      banner: 'Palaver replies',
      size: inbound.maxBytes,
      authOptional: true,
      disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
      ...(tls ? { key: readFileSync(options.tlsKeyFile as string), cert: readFileSync(options.tlsCertFile as string) } : {}),
      logger: false,
      socketTimeout: 60_000,
      closeTimeout: 5_000,
      onRcptTo: (address, session, callback) => {
        if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(smtpError(452, 'Too many recipients'));
        inbound.recipient(address.address).then(
          (verdict) => callback(verdict.ok ? undefined : smtpError(550, `No such recipient here: ${verdict.reason}`)),
          (err: unknown) => {
            logger.warn({ err }, 'email reply: recipient not checked');
            callback(smtpError(451, 'Try again later'));
          },
        );
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        stream.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes <= inbound.maxBytes) chunks.push(chunk);
        });
        stream.on('end', () => {
          if (stream.sizeExceeded || bytes > inbound.maxBytes) return callback(smtpError(552, 'Message too large'));
          const recipients = session.envelope.rcptTo.map((r) => r.address);
          inbound.receive(Buffer.concat(chunks), recipients).then(
            (outcome) => {
              if (outcome.kind === 'refused') return callback(smtpError(550, outcome.reason));
              if (outcome.kind === 'limited') return callback(smtpError(452, 'Too many replies: try again later'));
              callback();
            },
            (err: unknown) => {
              logger.warn({ err }, 'email reply not written: the sender will try again');
              callback(smtpError(451, 'Try again later'));
            },
          );
        });
      },
    };
    const server = new SMTPServer(settings);
    server.on('error', (err) => logger.warn({ err: err.message }, 'email reply listener: connection error'));
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
    logger.info({ port: this.port }, `email reply listener on smtp://${options.host}:${this.port}`);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
