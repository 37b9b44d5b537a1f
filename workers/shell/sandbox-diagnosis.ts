import { readFileSync } from 'node:fs';

/**
 * Why bubblewrap cannot start its sandbox, as a stable `cause` (in the refusal's `data.cause`)
 * and the fix to name:
 * - `not-installed`: no `bwrap` at the configured path;
 * - `user-namespaces-off`: the server is not root and the kernel lets it make no user namespace
 *   (bwrap needs one without the set-user-ID bit Debian's package does not set): a limit of 0
 *   (`user.max_user_namespaces`), Debian's older switch (`kernel.unprivileged_userns_clone`), or
 *   AppArmor's restriction on Ubuntu 23.10 and later (`kernel.apparmor_restrict_unprivileged_userns`);
 * - `sandbox-failed`: anything else (a container's seccomp profile, a missing mount), with bwrap's
 *   own words.
 */
export type SandboxCause = 'not-installed' | 'user-namespaces-off' | 'sandbox-failed';

export interface SandboxDiagnosis {
  cause: SandboxCause;
  /** What to do about it, in one sentence for people. */
  fix: string;
}

/** The /proc/sys files that decide whether an ordinary user may make a user namespace. */
export interface NamespaceSettings {
  /** `user.max_user_namespaces`; 0 refuses every new user namespace. */
  maxUserNamespaces?: number;
  /** `kernel.unprivileged_userns_clone` (Debian's patch); 0 refuses them to every user but root. */
  unprivilegedUsernsClone?: number;
  /** `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu); 1 refuses them to unconfined programs. */
  apparmorRestrict?: number;
}

function readNumber(file: string): number | undefined {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined; // Not this kernel's setting.
  }
}

/** The settings of this kernel, as this process's user namespace sees them (the files a setting lacks are left out). */
export function namespaceSettings(): NamespaceSettings {
  return {
    maxUserNamespaces: readNumber('/proc/sys/user/max_user_namespaces'),
    unprivilegedUsernsClone: readNumber('/proc/sys/kernel/unprivileged_userns_clone'),
    apparmorRestrict: readNumber('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
  };
}

const OFF_SWITCH = 'or turn sandbox mode off (SANDBOX_MODE=false, shell.sandbox: false) to run commands unconfined';

/**
 * The cause and fix for a sandbox that failed its test run (pure). `installed` says whether the
 * bwrap binary is there; `uid` is the server's (root needs no user namespace).
 */
export function diagnoseSandbox(installed: boolean, uid: number | undefined, settings: NamespaceSettings): SandboxDiagnosis {
  if (!installed) return { cause: 'not-installed', fix: `install the Debian package \`bubblewrap\` (apt-get install bubblewrap), ${OFF_SWITCH}` };
  if (uid !== 0) {
    // Decision: the one setting that refuses is named, with the command that allows it; each is a
    // system-wide choice of the machine's administrator, so the server never changes it.
    if (settings.maxUserNamespaces === 0) {
      return { cause: 'user-namespaces-off', fix: `allow user namespaces, which bubblewrap needs to run as an ordinary user: user.max_user_namespaces is 0 (as root: sysctl -w user.max_user_namespaces=15000, and the same in a file of /etc/sysctl.d/ to keep it), ${OFF_SWITCH}` };
    }
    if (settings.unprivilegedUsernsClone === 0) {
      return { cause: 'user-namespaces-off', fix: `allow user namespaces, which bubblewrap needs to run as an ordinary user: kernel.unprivileged_userns_clone is 0 (as root: sysctl -w kernel.unprivileged_userns_clone=1, and the same in a file of /etc/sysctl.d/ to keep it), ${OFF_SWITCH}` };
    }
    if (settings.apparmorRestrict === 1) {
      return { cause: 'user-namespaces-off', fix: `let bubblewrap make user namespaces: AppArmor restricts them (kernel.apparmor_restrict_unprivileged_userns is 1); give /usr/bin/bwrap an AppArmor profile that allows \`userns\` (Ubuntu's apparmor package ships bwrap-userns-restrict), ${OFF_SWITCH}` };
    }
  }
  return { cause: 'sandbox-failed', fix: `run the server where bubblewrap can make its namespaces (a container needs them allowed: Docker's default seccomp profile refuses them), ${OFF_SWITCH}` };
}
