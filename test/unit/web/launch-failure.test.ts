import { launchFailure } from '../../../workers/web/launch-health';

describe('launchFailure', () => {
  it("says the browser exited when puppeteer only says its connection closed", () => {
    expect(launchFailure(new Error('Protocol error (Target.setDiscoverTargets): Target closed'))).toBe(
      'Protocol error (Target.setDiscoverTargets): Target closed (the browser process exited while starting)',
    );
    expect(launchFailure(new Error('Connection closed.'))).toMatch(/exited while starting\)$/);
  });

  it('keeps a message that already names the cause', () => {
    const missing = 'the browser /opt/none does not exist; install Debian\'s chromium package or set CHROMIUM_PATH';
    expect(launchFailure(new Error(missing))).toBe(missing);
    expect(launchFailure('spawn EACCES')).toBe('spawn EACCES');
  });
});
