import { settledContent } from '../../../workers/web/web-searcher';

/**
 * A page whose content() fails like puppeteer's while a navigation is under way, `failures` times,
 * and whose document is still being parsed (readyState 'loading') for its first `loadingReads`
 * looks; content() then gives what was parsed so far.
 */
function navigatingPage(failures: number, message = 'Execution context was destroyed, most likely because of a navigation.', loadingReads = 0) {
  let calls = 0;
  let looks = 0;
  return {
    get calls() {
      return calls;
    },
    async evaluate(read: () => string): Promise<string> {
      void read;
      looks++;
      return looks <= loadingReads ? 'loading' : 'interactive';
    },
    async content() {
      calls++;
      if (calls <= failures) throw new Error(message);
      return looks <= loadingReads ? '<html>res' : '<html>results</html>';
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

  it('waits until the document is parsed, not reading the part of it that has arrived', async () => {
    const page = navigatingPage(0, undefined, 3);
    await expect(settledContent(page, performance.now() + 10_000)).resolves.toBe('<html>results</html>');
    expect(page.calls).toBe(1);
  });

  it('reads a document still loading as it is when the deadline is too close to wait', async () => {
    const page = navigatingPage(0, undefined, 100);
    await expect(settledContent(page, performance.now() + 500)).resolves.toBe('<html>res');
  });

  it('gives up when the deadline is too close to wait', async () => {
    const page = navigatingPage(100);
    await expect(settledContent(page, performance.now() + 500)).rejects.toThrow(/context was destroyed/);
  });
});
