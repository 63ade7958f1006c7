/**
 * The gateway's TLS material (certificate, key, client CA bundle) loaded from files and kept fresh: the files are
 * polled every `tls.reloadIntervalSeconds`, and when any changed and the new set is valid, every attached server gets
 * the new context through `setSecureContext` — existing connections keep the old one, new connections see the new
 * one. A new set that does not load (half-written file, key not matching the certificate) is logged and the old
 * context stays in use until the files change again.
 *
 * Client certificates are requested (OPTIONAL, REQUIRE) but never rejected by the handshake (`rejectUnauthorized:
 * false`): the authenticator refuses them, so the client gets UNAUTHENTICATED with the reason, not a TLS alert.
 */
import { readFileSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import tls from 'node:tls';
import type { Logger } from '../../shared/logger.js';
import { createPeriodicJob } from '../../shared/periodic-job.js';
import type { GatewayTlsConfig } from '../config/schema.js';

/** The PEM material of one context. */
interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

/** What servers need to serve TLS, and the reloading of it. */
export interface TlsContextSource {
  /** Options for `tls.createServer` / `http2.createSecureServer`: material plus the client-certificate policy. */
  serverOptions(): tls.TlsOptions;
  /** Registers a server whose context is replaced when the files change. */
  attach(server: tls.Server): void;
  /** Checks the files now; resolves true when a new context was installed (the poller calls it too). */
  reload(): Promise<boolean>;
  /** Stops polling. */
  close(): void;
}

/**
 * Loads the files now — throwing an error that names the config key and file when one cannot be read or the set does
 * not form a valid context — and starts polling them (the timer does not keep the process alive).
 */
export function createTlsContextSource(config: GatewayTlsConfig, logger: Logger): TlsContextSource {
  const files: Record<keyof TlsMaterial, string | undefined> = {
    cert: config.certFile,
    key: config.keyFile,
    ca: config.clientAuth === 'NONE' ? undefined : config.caFile,
  };
  const keyName = { cert: 'tls.certFile', key: 'tls.keyFile', ca: 'tls.caFile' } as const;

  const readNow = (): { material: TlsMaterial; signature: string } => {
    const parts: string[] = [];
    const out: Partial<TlsMaterial> = {};
    for (const k of ['cert', 'key', 'ca'] as const) {
      const file = files[k];
      if (!file) continue;
      try {
        const s = statSync(file);
        parts.push(`${s.ino}:${s.size}:${s.mtimeMs}`);
        out[k] = readFileSync(file);
      } catch (err) {
        throw new Error(`${keyName[k]}: cannot read ${file}: ${(err as Error).message}`);
      }
    }
    return { material: out as TlsMaterial, signature: parts.join('|') };
  };
  const validate = (m: TlsMaterial): void => {
    try {
      tls.createSecureContext({ cert: m.cert, key: m.key, ca: m.ca });
    } catch (err) {
      throw new Error(
        `tls: ${files.cert} / ${files.key}${files.ca ? ` / ${files.ca}` : ''} do not form a valid TLS context: ${(err as Error).message}`,
      );
    }
  };

  const first = readNow();
  validate(first.material);
  let material = first.material;
  let signature = first.signature;
  let triedSignature = signature;
  const servers = new Set<tls.Server>();

  const currentSignature = async (): Promise<string> => {
    const parts: string[] = [];
    for (const k of ['cert', 'key', 'ca'] as const) {
      const file = files[k];
      if (!file) continue;
      const s = await stat(file);
      parts.push(`${s.ino}:${s.size}:${s.mtimeMs}`);
    }
    return parts.join('|');
  };

  let running: Promise<boolean> | undefined;
  const check = async (): Promise<boolean> => {
    let next: string;
    try {
      next = await currentSignature();
    } catch (err) {
      if (triedSignature !== 'missing')
        logger.error({ err: (err as Error).message }, 'TLS files unreadable; keeping the current certificate');
      triedSignature = 'missing';
      return false;
    }
    if (next === signature || next === triedSignature) return false;
    triedSignature = next;
    try {
      const loaded = readNow();
      validate(loaded.material);
      material = loaded.material;
      signature = loaded.signature;
      triedSignature = signature;
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'new TLS files do not load; keeping the current certificate');
      return false;
    }
    for (const server of servers) server.setSecureContext({ cert: material.cert, key: material.key, ca: material.ca });
    logger.info({ certFile: files.cert, keyFile: files.key, caFile: files.ca }, 'TLS certificate reloaded');
    return true;
  };

  function reload(): Promise<boolean> {
    running ??= check().finally(() => (running = undefined));
    return running;
  }
  const poll = createPeriodicJob({
    run: reload,
    intervalMs: config.reloadIntervalSeconds * 1000,
    logger,
    errorMessage: 'TLS file check failed; keeping the current certificate',
  });
  poll.start();

  return {
    serverOptions() {
      const clientCerts = config.clientAuth !== 'NONE';
      return {
        cert: material.cert,
        key: material.key,
        ...(clientCerts ? { ca: material.ca, requestCert: true, rejectUnauthorized: false } : {}),
      };
    },
    attach(server) {
      servers.add(server);
      server.once('close', () => servers.delete(server));
    },
    reload,
    close() {
      void poll.stop();
      servers.clear();
    },
  };
}
