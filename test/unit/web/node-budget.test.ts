import { cutAtNodes } from '../../../workers/web/node-budget';

describe('cutAtNodes', () => {
  it.each([
    { given: '<p>a</p><p>b</p>', max: 2, want: { html: '<p>a</p><p>b</p>', cut: false } },
    { given: '<p>a</p><p>b</p><p>c</p>', max: 2, want: { html: '<p>a</p><p>b</p>', cut: true } },
    { given: '<p>a &amp; b &lt; c</p>', max: 2, want: { html: '<p>a &amp; b ', cut: true } },
    // A closing tag, a comment or a lone `<` is no node.
    { given: '<p>1 < 2</p><!-- x --></p>', max: 1, want: { html: '<p>1 < 2</p><!-- x --></p>', cut: false } },
    { given: '', max: 0, want: { html: '', cut: false } },
  ])('cuts $given at $max nodes', ({ given, max, want }) => {
    expect(cutAtNodes(given, max)).toEqual(want);
  });
});
