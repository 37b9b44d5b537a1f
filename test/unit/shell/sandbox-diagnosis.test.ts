import { diagnoseSandbox, type NamespaceSettings } from '../../../workers/shell/sandbox-diagnosis';

describe('diagnoseSandbox', () => {
  const ordinary = 1000;
  test.each<[string, boolean, number | undefined, NamespaceSettings, string, RegExp]>([
    ['no bwrap', false, ordinary, {}, 'not-installed', /apt-get install bubblewrap/],
    ['no bwrap, as root', false, 0, { maxUserNamespaces: 0 }, 'not-installed', /apt-get install bubblewrap/],
    ['a user-namespace limit of 0', true, ordinary, { maxUserNamespaces: 0, unprivilegedUsernsClone: 1 }, 'user-namespaces-off', /user\.max_user_namespaces is 0 \(as root: sysctl -w user\.max_user_namespaces=15000/],
    ["Debian's switch off", true, ordinary, { maxUserNamespaces: 15000, unprivilegedUsernsClone: 0 }, 'user-namespaces-off', /sysctl -w kernel\.unprivileged_userns_clone=1/],
    ["Ubuntu's AppArmor restriction", true, ordinary, { maxUserNamespaces: 15000, apparmorRestrict: 1 }, 'user-namespaces-off', /kernel\.apparmor_restrict_unprivileged_userns is 1/],
    ['namespaces allowed, bwrap failed anyway', true, ordinary, { maxUserNamespaces: 15000, unprivilegedUsernsClone: 1, apparmorRestrict: 0 }, 'sandbox-failed', /seccomp/],
    ['root, which needs no user namespace', true, 0, { maxUserNamespaces: 0 }, 'sandbox-failed', /seccomp/],
  ])('%s', (_name, installed, uid, settings, cause, fix) => {
    const diagnosis = diagnoseSandbox(installed, uid, settings);
    expect(diagnosis.cause).toBe(cause);
    expect(diagnosis.fix).toMatch(fix);
    expect(diagnosis.fix).toContain('SANDBOX_MODE=false');
  });
});
