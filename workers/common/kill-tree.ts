import { existsSync } from 'node:fs';
import treeKill from 'tree-kill';

let psAvailable: boolean | undefined;

/** tree-kill shells out to `ps` and crashes Node with an unhandled error when it is missing. */
function hasPs(): boolean {
  psAvailable ??= ['/bin/ps', '/usr/bin/ps', '/usr/local/bin/ps'].some((file) => existsSync(file));
  return psAvailable;
}

/**
 * Kills a process group at once (synchronously). For a dead group leader this is all that is
 * left to do: its children were re-parented and `ps` no longer shows them under it.
 */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!pid || pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // No such group: nothing is left of it.
  }
}

/**
 * Kills a process, its process group and every descendant `ps` can still see. The group kill
 * catches children that were re-parented (double fork); tree-kill catches those that left the
 * group. Never throws; resolves when the signals were sent.
 */
export function killTree(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL', options: { group?: boolean } = {}): Promise<void> {
  if (!pid || pid <= 0) return Promise.resolve();
  const sendToGroup = () => {
    if (options.group === false) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // No such group (the process was not a group leader, or it is gone already).
    }
  };
  if (!hasPs()) {
    sendToGroup();
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    // tree-kill reads the tree first, so signal the group after it has looked.
    try {
      treeKill(pid, signal, () => {
        sendToGroup();
        resolve();
      });
    } catch {
      sendToGroup();
      resolve();
    }
  });
}
