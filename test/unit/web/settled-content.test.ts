import { settledContent } from '../../../workers/web/web-searcher';

/** A page whose content() fails like puppeteer's while a navigation is under way, `failures` times. */
function navigatingPage(failures: number, message = 'Execution context was destroyed, most likely because of a navigation.') {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    async content() {
      calls++;
      if (calls <= failures) throw new Error(message);
      return '<html>results</html>';
    },
  };
}

describe('settledContent', () => {
  it('waits out a navigation in progress and returns the page it lands on', async () => {
    const page = navigatingPage(3);
    await expect(settledContent(page, performance.now() + 10_000)).resolves.toBe('<html>results</html>');
    expect(page.calls).toBe(4);
  });

  it('passes on any other error at once', async () => {
    const page = navigatingPage(1, 'Target closed');
    await expect(settledContent(page, performance.now() + 10_000)).rejects.toThrow('Target closed');
    expect(page.calls).toBe(1);
  });

  it('gives up when the deadline is too close to wait', async () => {
    const page = navigatingPage(100);
    await expect(settledContent(page, performance.now() + 500)).rejects.toThrow(/context was destroyed/);
  });
});
