/**
 * Runs a built-in program over a Kubernetes "channel" WebSocket (`v5.channel.k8s.io` / `v4.channel.k8s.io`), as the
 * kubelet's streaming server does for exec and attach: every binary message starts with its stream byte (0 stdin,
 * 1 stdout, 2 stderr, 3 error/status, 4 resize; v5 adds 255 = close a stream, `[255, 0]` closes stdin). When the
 * program ends, a `metav1.Status` goes out on stream 3 and the WebSocket closes normally (1000), which is how
 * client-go learns the exit code. v4 cannot close stdin, so a program reading stdin ends only when the client leaves.
 */
import type { WebSocket } from 'ws';
import type { Program, ProgramIo } from './program.js';

/** Channel numbers of the remote command protocols. */
const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** Subprotocols served for exec and attach, best first. */
export const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

/** Which streams the client asked for (the `stdin`, `stdout`, `stderr`, `tty` query parameters). */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The status kubectl turns into its own exit code (`NonZeroExitCode` with an `ExitCode` cause). */
function exitStatus(code: number, command: string[]): Record<string, unknown> {
  if (code === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** Serves one exec/attach session on an accepted WebSocket; resolves when the socket is closed. */
export function runChannelSession(ws: WebSocket, options: StreamOptions, program: Program, command: string[]): Promise<void> {
  const v5 = ws.protocol === 'v5.channel.k8s.io';
  const abort = new AbortController();
  const queue: Buffer[] = [];
  let stdinClosed = !options.stdin;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const send = (channel: number, data: Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(Buffer.concat([Buffer.from([channel]), data]), { binary: true });
  };

  ws.on('message', (raw, isBinary) => {
    const data = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    if (!isBinary || data.length === 0) return;
    const channel = data[0];
    if (channel === CHANNEL.stdin && !stdinClosed) {
      if (data.length > 1) queue.push(data.subarray(1));
      notify();
    } else if (v5 && channel === CHANNEL.close && data[1] === CHANNEL.stdin) {
      stdinClosed = true;
      notify();
    }
    // resize (4) and anything else: a built-in has no terminal to resize
  });

  const io: ProgramIo = {
    hasStdin: options.stdin,
    signal: abort.signal,
    write(stream, data) {
      const buf = typeof data === 'string' ? Buffer.from(data) : data;
      if (stream === 'stdout' || options.tty) {
        if (options.stdout) send(CHANNEL.stdout, buf);
      } else if (options.stderr) send(CHANNEL.stderr, buf);
    },
    async readStdin() {
      for (;;) {
        const next = queue.shift();
        if (next) return next;
        if (stdinClosed || abort.signal.aborted) return null;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };

  return new Promise((resolve) => {
    ws.on('close', () => {
      abort.abort();
      notify();
      resolve();
    });
    ws.on('error', () => ws.terminate());
    program(io)
      .catch(() => 1)
      .then((code) => {
        if (abort.signal.aborted) return;
        send(CHANNEL.error, Buffer.from(JSON.stringify(exitStatus(code, command))));
        ws.close(1000);
      });
  });
}
