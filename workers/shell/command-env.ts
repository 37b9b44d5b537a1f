import { userInfo } from 'node:os';

/** Variables never passed to an unsandboxed command: the supervisor's own secrets. */
const SECRET_ENV = /^(MCPVISOR_|NODE_CHANNEL_)|^API_HEADERS$|AUTH_TOKEN$/;

/** Editors a command could start: with no terminal they wait for keys until the timeout. */
const EDITOR_ENV = ['EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR'];

/**
 * git's editor in both modes: it fails, so git stops at once, and git's own error quotes it
 * ("There was a problem with the editor '…'"), so the command says why and what to do. git takes
 * `GIT_EDITOR` before `core.editor`: a `core.editor = vim` in the user's ~/.gitconfig (the host's
 * HOME unconfined), the project's .git/config, `git config --global` in the sandbox's HOME or
 * `git -c core.editor=vi` started vim, which waits for keys on /dev/null and a pipe until the
 * timeout, and said nothing. git runs it as `sh -c '… "$@"'`: the file name goes to `false`.
 */
export const GIT_NO_EDITOR = ': no terminal here, so git cannot open an editor: give the text with -m MSG or -F FILE, --no-edit keeps the one proposed, GIT_EDITOR=true git ... accepts it; false';

/** What every command gets, in both modes: no terminal, pagers that print, no editor but the one above. */
const NO_TERMINAL: NodeJS.ProcessEnv = { TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat', GIT_EDITOR: GIT_NO_EDITOR, GIT_SEQUENCE_EDITOR: GIT_NO_EDITOR };

/**
 * Without a network, package managers retry what cannot work: npm waited 10 s, then 60 s, for
 * `getaddrinfo EAI_AGAIN` (`npm install`, `npx` ran into the 30 s timeout with no output at all),
 * pip 8 s. With no retry both fail within a second, naming the host they could not resolve. The
 * variables only set defaults: a command may set them again.
 */
const NO_NETWORK: NodeJS.ProcessEnv = { npm_config_fetch_retries: '0', PIP_RETRIES: '0' };

/**
 * Caches a sandboxed command's tools would write under HOME: npm's `.npm/` (its logs and
 * update-notifier stamp even for a failed `npm install`), pip's and other XDG tools' `.cache/`.
 * When HOME was the workspace they showed in `git status`, and an assistant's `git add -A`
 * committed them; in the sandbox's own home (sandbox-home.ts) they would grow it without bound on
 * the host's disk. They go to the command's private /tmp, gone after it: a cache that outlives one
 * command is of little use without a network. npm's update check, a network request each run, is off.
 */
const CACHES_IN_TMP: NodeJS.ProcessEnv = { XDG_CACHE_HOME: '/tmp/.cache', npm_config_cache: '/tmp/.npm', npm_config_update_notifier: 'false' };

/**
 * The environment of an unconfined command: the worker's less the supervisor's secrets and the
 * user's editors; PWD set to the workspace; no terminal (`TERM=dumb`, pagers that print, git's
 * editor refusing): a client's `TERM` made `git commit` without `-m` start vim, which drew escapes
 * and hung until the timeout.
 */
export function hostCommandEnv(workspace: string, environment: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(environment)) if (!SECRET_ENV.test(name) && !EDITOR_ENV.includes(name)) env[name] = value;
  return { ...env, PWD: workspace, ...NO_TERMINAL };
}

/**
 * The whole environment of a sandboxed command: nothing of the host's leaks in. `USER` and
 * `LOGNAME` name the server's user, whom the command runs as (`id` says so anyway): scripts that
 * build paths or git identities from `$USER` found it empty. HOME is `home`, the sandbox's own
 * (sandbox-home.ts), not the workspace. Caches go to the command's /tmp
 * (CACHES_IN_TMP). Without `network`, package managers fail at once instead of retrying (NO_NETWORK).
 */
export function sandboxCommandEnv(workspace: string, pathInside: string, network = false, home = workspace): NodeJS.ProcessEnv {
  const user = currentUser();
  return {
    PATH: pathInside,
    HOME: home,
    // XDG's defaults, spelled out for tools that read only the variables.
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_STATE_HOME: `${home}/.local/state`,
    ...(user ? { USER: user, LOGNAME: user } : {}),
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    SHELL: '/bin/sh',
    ...CACHES_IN_TMP,
    ...NO_TERMINAL,
    ...(network ? {} : NO_NETWORK),
  };
}

function currentUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined; // a uid without a passwd entry (a container's --user 12345)
  }
}
