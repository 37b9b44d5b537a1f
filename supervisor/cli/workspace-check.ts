import { realpathSync, statSync } from 'node:fs';
import type { Origins } from '../../config/origins';
import { ConfigError, type Config } from '../../config/validate';
import { describeOpenError, directoryAccessProblem } from '../../protocol/access-denied';

/**
 * Refuses a shell workspace (`config.shell.workspace`, else the current directory) that does not
 * exist, is no directory, or that this user may not enter: at the start, with exit code 2,
 * named where it was given (`origins`: SHELL_WORKSPACE, or the config file and its key; else
 * `unset`, the words for the default). In sandbox mode the root is refused too, `rootFix` saying
 * what to set instead. Returns the directory checked. The shell worker checked these only after
 * the other pools had started (exit 1), naming SHELL_WORKSPACE, which mcpvisor does not read.
 */
export function checkWorkspace(config: Config, origins: Origins | undefined, unset: string, rootFix: string): { dir: string; setting: string } {
  const dir = config.shell.workspace ?? process.cwd();
  const setting = config.shell.workspace === undefined || !origins ? unset : origins.name(['shell', 'workspace']);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (error) {
    // A directory above it that this user may not search hid it: it said "does not exist".
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw new ConfigError(`${setting}: ${dir}: ${describeOpenError(dir, error, 'directory')}`);
    throw new ConfigError(`${setting}: ${dir} does not exist`);
  }
  if (!isDir) throw new ConfigError(`${setting}: ${dir} is not a directory`);
  // One this user cannot enter started, and every command failed as "bubblewrap unavailable".
  const denied = directoryAccessProblem(dir);
  if (denied) throw new ConfigError(`${setting}: ${denied}`);
  // Claude Desktop starts stdio servers in /, so the default workspace is the root there.
  if (config.shell.sandbox && realpathSync(dir) === '/') {
    const why = config.shell.workspace === undefined ? 'the current directory, /, as MCP clients such as Claude Desktop start servers there' : '/';
    throw new ConfigError(`${setting}: the workspace is ${why}; sandbox mode confines commands to a directory below the root: ${rootFix}`);
  }
  return { dir, setting };
}
