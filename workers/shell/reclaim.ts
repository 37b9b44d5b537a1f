import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options?: { type?: 'minor' | 'major' }) => void;
let gc: Collect | null | undefined;

/**
 * Runs a garbage collection when the runtime allows it, else does nothing (`--expose-gc` is set at
 * run time and the function taken from a fresh context). Two uses:
 *
 * - `minor`, while a command's output past the cap is read and dropped: each 64 KiB chunk is a
 *   Buffer outside the V8 heap, and V8 collects them only after tens of MB piled up, so a 200 MB
 *   stream raised the worker's RSS by ~60 MB. They die young, so a minor collection (~1 ms) every
 *   2 MB frees them: measured on 200 MB drained, 0.7-1.1 s and 63 MB peak RSS, against 2.8 s with
 *   full collections every 4 MB and 72 MB with none. Every 16th is a full one (output-capture.ts):
 *   chunks still in the kept tail at a minor collection are moved to old space, where minor ones
 *   never free them; on a loaded machine a 200 MB drain reached ~100 MB of RSS without it, 79-89 with.
 * - `major`, shortly after a reply carried MBs of output: its strings and their JSON copy sit in
 *   old space, which V8 lets grow first; without it five 50 MB commands in a row took a worker
 *   from 48 to 121 MB of RSS, with it the peak stays at 92 MB and RSS settles at 79 MB.
 */
export function reclaimMemory(type: 'minor' | 'major' = 'minor'): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as Collect;
    } catch {
      gc = null;
    }
  }
  // Node 20's gc() honours { type: 'minor' } but not { type: 'major' }: a bare call is a full one.
  if (type === 'minor') gc?.({ type });
  else gc?.();
}
