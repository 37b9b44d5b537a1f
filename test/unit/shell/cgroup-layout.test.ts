import { findCgroupLayout, processStartTime } from '../../../workers/shell/cgroup-layout';

const line = (id: number, root: string, mountPoint: string, fsType: string, superOptions: string) => `${id} 23 0:${id} ${root} ${mountPoint} rw,relatime - ${fsType} ${fsType} ${superOptions}`;

/** This machine's kind: v1 controllers under /sys/fs/cgroup and an empty unified hierarchy beside them. */
const HYBRID = [
  line(31, '/', '/sys/fs/cgroup', 'tmpfs', 'rw,mode=755'),
  line(35, '/', '/sys/fs/cgroup/memory', 'cgroup', 'rw,memory'),
  line(39, '/', '/sys/fs/cgroup/pids', 'cgroup', 'rw,pids'),
  line(32, '/', '/sys/fs/cgroup/cpu,cpuacct', 'cgroup', 'rw,cpu,cpuacct'),
  line(41, '/', '/sys/fs/cgroup/unified', 'cgroup2', 'rw'),
].join('\n');
const HYBRID_SELF = '9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n';

describe('findCgroupLayout', () => {
  test.each([
    {
      given: 'a hybrid system: v1 pids and memory are used, under the process own cgroup in each',
      mountInfo: HYBRID,
      self: HYBRID_SELF,
      want: { version: 1, hierarchies: [{ kind: 'pids', dir: '/sys/fs/cgroup/pids' }, { kind: 'memory', dir: '/sys/fs/cgroup/memory/process_api/abc' }] },
    },
    {
      given: 'v1 without memory: pids alone',
      mountInfo: line(39, '/', '/sys/fs/cgroup/pids', 'cgroup', 'rw,pids'),
      self: '8:pids:/user.slice\n',
      want: { version: 1, hierarchies: [{ kind: 'pids', dir: '/sys/fs/cgroup/pids/user.slice' }] },
    },
    {
      given: 'a unified (v2) system, as Debian 12 boots',
      mountInfo: line(30, '/', '/sys/fs/cgroup', 'cgroup2', 'rw,nsdelegate,memory_recursiveprot'),
      self: '0::/system.slice/mcpvisor.service\n',
      want: { version: 2, hierarchies: [{ kind: 'unified', dir: '/sys/fs/cgroup/system.slice/mcpvisor.service' }] },
    },
    {
      given: 'a container whose cgroup file system shows its own subtree (mount root /docker/x)',
      mountInfo: line(30, '/docker/x', '/sys/fs/cgroup', 'cgroup2', 'rw'),
      self: '0::/docker/x/app\n',
      want: { version: 2, hierarchies: [{ kind: 'unified', dir: '/sys/fs/cgroup/app' }] },
    },
    {
      given: 'a mount point with a space (octal escape in mountinfo)',
      mountInfo: line(30, '/', '/mnt/cg\\040two', 'cgroup2', 'rw'),
      self: '0::/\n',
      want: { version: 2, hierarchies: [{ kind: 'unified', dir: '/mnt/cg two' }] },
    },
  ])('$given', ({ mountInfo, self, want }) => {
    expect(findCgroupLayout(mountInfo, self)).toEqual(want);
  });

  test.each([
    { given: 'no cgroup file system at all', mountInfo: line(31, '/', '/sys/fs/cgroup', 'tmpfs', 'ro'), self: '0::/\n' },
    { given: 'a mount that shows another subtree than the process is in', mountInfo: line(30, '/docker/x', '/sys/fs/cgroup', 'cgroup2', 'rw'), self: '0::/docker/y\n' },
    { given: 'cgroup mounts covered by a later mount on /sys/fs/cgroup (a container)', mountInfo: `${HYBRID}\n${line(50, '/', '/sys/fs/cgroup', 'tmpfs', 'ro')}`, self: HYBRID_SELF },
    { given: 'a v1 pids mount but no pids line for the process', mountInfo: line(39, '/', '/sys/fs/cgroup/pids', 'cgroup', 'rw,pids'), self: '4:memory:/\n' },
  ])('$given: none, with the reason', ({ mountInfo, self }) => {
    expect(findCgroupLayout(mountInfo, self)).toEqual({ version: null, reason: expect.stringContaining('no cgroup file system') });
  });
});

describe('processStartTime', () => {
  test("reads a live process's start time and none for a pid that is not there", () => {
    expect(processStartTime('self')).toMatch(/^\d+$/);
    expect(processStartTime(process.pid)).toBe(processStartTime('self'));
    expect(processStartTime(2 ** 22 + 1)).toBeUndefined();
  });
});
