import { test } from 'node:test';
import assert from 'node:assert/strict';
import { counted } from '../../webview/lib/counted';

test('a count reads as English: 1 token, 0 tokens, 5 tokens, 1 query, 2 queries', () => {
  assert.equal(counted(1, 'token'), '1 token');
  assert.equal(counted(0, 'token'), '0 tokens');
  assert.equal(counted(5, 'finding'), '5 findings');
  assert.equal(counted(1, 'query', 'queries'), '1 query');
  assert.equal(counted(2, 'query', 'queries'), '2 queries');
});

test('a count of thousands is grouped: 3,599 queries, 30,000 points', () => {
  assert.equal(counted(3599, 'query', 'queries'), '3,599 queries');
  assert.equal(counted(30000, 'point'), '30,000 points');
  assert.equal(counted(999, 'key'), '999 keys');
});
