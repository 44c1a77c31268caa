/**
 * An input is named the same in every view: describeInput (the selection, in the extension's
 * header) and describeShownInput (the attention drawn, in the page's header) agree, the EOS the
 * model appends to every source left out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeInput, describeShownInput } from '../../src/protocol/attention';

test('a typed input and the attention of it are named alike: "5 6 7", not "5 6 7 </s>"', () => {
  const typed = describeInput({ kind: 'text', src: '5 6 7' });
  const shown = describeShownInput({ source: { input: 'input' }, srcTokens: ['5', '6', '7', '</s>'] });
  assert.equal(typed, '5 6 7');
  assert.equal(shown, typed);
  assert.equal(describeShownInput({ source: { input: 'probe' }, srcTokens: ['4', '</s>'] }), 'probe');
  assert.equal(describeInput({ kind: 'probe' }), 'probe');
});
