/**
 * The sandbox's pace on the command line (`outpost sandbox`, `outpost demo`): how long the pretend kubelet keeps a new
 * pod Pending and a started pod not Ready, which together set how long each step of a Deployment's rollout lasts.
 * The defaults are named in `--help` from src/shared/sandbox-pace.ts, a module that imports nothing, so showing the
 * help does not load the sandbox.
 */
import { Option } from 'commander';
import { DEFAULT_POD_READY_DELAY_MS, DEFAULT_POD_START_DELAY_MS } from '../shared/sandbox-pace.js';
import { parseMilliseconds } from './parse.js';

/** `--pod-start-delay-ms <ms>`, parsed to `podStartDelayMs`. */
export function podStartDelayOption(): Option {
  return new Option(
    '--pod-start-delay-ms <ms>',
    `how long a new pod stays Pending before it runs, in milliseconds (default ${DEFAULT_POD_START_DELAY_MS})`,
  ).argParser(parseMilliseconds);
}

/** `--pod-ready-delay-ms <ms>`, parsed to `podReadyDelayMs`. */
export function podReadyDelayOption(): Option {
  return new Option(
    '--pod-ready-delay-ms <ms>',
    'how long a started pod stays Running but not Ready, in milliseconds, unless its sandbox.outpost.dev/ready-after-ms ' +
      `annotation says otherwise (default ${DEFAULT_POD_READY_DELAY_MS}: Ready at once); with --pod-start-delay-ms it ` +
      'sets the pace of rollouts: 1500, say, keeps each step of a rolling update visible for a second and a half',
  ).argParser(parseMilliseconds);
}
