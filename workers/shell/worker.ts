import path from 'node:path';
import { BULK_FD } from '../../protocol/bulk-text';
import { runWorker } from '../../protocol/worker-runtime';
import { closeInheritedFds } from '../common/inherited-fds';
import { shellSettings } from './defaults';
import { createShellService } from './service';

/**
 * Entry of a shell pool worker process, forked by the supervisor. Its `init` config is the
 * validated `shell` section of the configuration.
 *
 * The worker leaves its working directory for `/` before it starts anything: it runs helpers by
 * name (`mkfifo` for the output pipes, `ps` when it kills a tree), and a PATH with an empty or
 * relative entry (`:/usr/bin`, a common profile slip) has them looked up in the current directory,
 * which is the workspace when none is configured. A sandboxed command could plant `./mkfifo`
 * there and have the worker run it unconfined. `/` is not writable from the sandbox (sandbox mode
 * refuses it as a workspace). Paths of the config are resolved against the old directory first.
 */
runWorker(async (config, log) => {
  // Before any command is started: a descriptor the server's launcher left open would reach every
  // command, in the sandbox too (a directory's is the host's file system). IPC and the bulk pipe stay.
  const channelFd = (process.channel as { fd?: unknown } | undefined)?.fd;
  const closed = closeInheritedFds(typeof channelFd === 'number' ? [channelFd, BULK_FD] : [BULK_FD]);
  if (closed.length > 0) log.warn('closed file descriptors the server inherited from the program that started it, so that no command gets them', { closed });
  const settings = shellSettings(config);
  const anchored = {
    ...settings,
    workspace: path.resolve(settings.workspace ?? process.cwd()),
    // A bare name is looked up in PATH by spawn, a path with a slash against the directory.
    bwrapPath: settings.bwrapPath.includes('/') ? path.resolve(settings.bwrapPath) : settings.bwrapPath,
  };
  process.chdir('/');
  return createShellService(anchored, log);
});
