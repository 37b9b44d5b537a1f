import { totalmem } from 'node:os';
import { validateConfig } from '../../../config';
import { commandProcessLimit, defaultMemoryLimit, shellSettings } from '../../../workers/shell/defaults';

describe('shell.sandboxMaxMemoryBytes', () => {
  test('defaults to half of the machine\'s memory, at most 8 GiB', () => {
    const expected = Math.min(Math.floor(totalmem() / 2), 8 * 1024 ** 3);
    expect(defaultMemoryLimit()).toBe(expected);
    expect(shellSettings({}).sandboxMaxMemoryBytes).toBe(expected);
    expect(validateConfig({}).shell.sandboxMaxMemoryBytes).toBeUndefined();
  });

  test('takes a number of bytes, or false for no limit', () => {
    expect(shellSettings({ sandboxMaxMemoryBytes: 512 * 1024 ** 2 }).sandboxMaxMemoryBytes).toBe(512 * 1024 ** 2);
    expect(shellSettings({ sandboxMaxMemoryBytes: false }).sandboxMaxMemoryBytes).toBe(false);
    expect(validateConfig({ shell: { sandboxMaxMemoryBytes: false } }).shell.sandboxMaxMemoryBytes).toBe(false);
  });

  test('refuses less than 64 MiB, or anything else, naming the field', () => {
    expect(() => validateConfig({ shell: { sandboxMaxMemoryBytes: 1_000_000 } })).toThrow(/shell\.sandboxMaxMemoryBytes must be at least 67108864 \(64 MiB\)/);
    expect(() => validateConfig({ shell: { sandboxMaxMemoryBytes: '1G' } })).toThrow(/sandboxMaxMemoryBytes/);
    expect(() => shellSettings({ sandboxMaxMemoryBytes: 1000 })).toThrow(/shell\.sandboxMaxMemoryBytes must be false or an integer of at least 67108864, got 1000/);
  });
});

describe('shell.commandMaxMemoryBytes', () => {
  test('defaults to the memory limit of one process: half of the machine\'s memory, at most 8 GiB', () => {
    expect(shellSettings({}).commandMaxMemoryBytes).toBe(defaultMemoryLimit());
    expect(validateConfig({}).shell.commandMaxMemoryBytes).toBeUndefined();
  });

  test('takes a number of bytes, or false for no limit', () => {
    expect(shellSettings({ commandMaxMemoryBytes: 2 * 1024 ** 3 }).commandMaxMemoryBytes).toBe(2 * 1024 ** 3);
    expect(validateConfig({ shell: { commandMaxMemoryBytes: false } }).shell.commandMaxMemoryBytes).toBe(false);
  });

  test('refuses less than 64 MiB, or anything else, naming the field', () => {
    expect(() => validateConfig({ shell: { commandMaxMemoryBytes: 1_000_000 } })).toThrow(/shell\.commandMaxMemoryBytes must be at least 67108864 \(64 MiB\)/);
    expect(() => validateConfig({ shell: { commandMaxMemoryBytes: '1G' } })).toThrow(/commandMaxMemoryBytes/);
    expect(() => shellSettings({ commandMaxMemoryBytes: 1000 })).toThrow(/shell\.commandMaxMemoryBytes must be false or an integer of at least 67108864, got 1000/);
  });
});

describe('shell.commandMaxProcesses', () => {
  test('limits a whole command in both modes, in sandbox mode no more than sandboxMaxProcesses', () => {
    expect(validateConfig({}).shell.commandMaxProcesses).toBe(4096);
    expect(commandProcessLimit(shellSettings({ sandbox: false }))).toBe(4096);
    expect(commandProcessLimit(shellSettings({ sandbox: true }))).toBe(512);
    expect(commandProcessLimit(shellSettings({ sandbox: true, commandMaxProcesses: 100 }))).toBe(100);
    expect(commandProcessLimit(shellSettings({ sandbox: false, commandMaxProcesses: false }))).toBeUndefined();
    expect(commandProcessLimit(shellSettings({ sandbox: true, commandMaxProcesses: false }))).toBe(512);
  });

  test('refuses anything but a positive number or false, naming the field', () => {
    expect(() => validateConfig({ shell: { commandMaxProcesses: 0 } })).toThrow(/commandMaxProcesses/);
    expect(() => validateConfig({ shell: { commandMaxProcesses: true } })).toThrow(/shell\.commandMaxProcesses must be a positive number of processes or false/);
    expect(() => shellSettings({ commandMaxProcesses: 1.5 })).toThrow(/shell\.commandMaxProcesses must be false or a positive integer, got 1.5/);
  });
});
