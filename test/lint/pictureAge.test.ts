/**
 * pictureAge (the README pictures' age check) on scratch repositories whose commits are back-dated:
 * a picture committed 59 days before the code it shows is too old for a 30-day margin and fine for
 * a 90-day one, and in a shallow clone it is judged only where the clone's history decides it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pictureAge } from './pictureAge';

const tmp = mkdtempSync(join(tmpdir(), 'picture-age-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function git(cwd: string, args: string[], date?: string): void {
  const env = { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, env, stdio: 'ignore' });
}

/** A repository: the picture on Jan 1, another file on Feb 1, the view's code on Mar 1 (59 days on). */
function scratch(): string {
  const repo = join(tmp, 'whole');
  mkdirSync(join(repo, 'media'), { recursive: true });
  mkdirSync(join(repo, 'view'));
  git(repo, ['init', '-q']);
  const commit = (file: string, date: string) => {
    writeFileSync(join(repo, file), date);
    git(repo, ['add', file]);
    git(repo, ['commit', '-q', '-m', file], `${date}T12:00:00Z`);
  };
  commit('media/view.png', '2026-01-01');
  commit('other.txt', '2026-02-01');
  commit('view/page.ts', '2026-03-01');
  return repo;
}

const repo = scratch();
const shallow = (depth: number): string => {
  const dir = join(tmp, `depth-${depth}`);
  git(tmp, ['clone', '-q', '--depth', String(depth), `file://${repo}`, dir]);
  return dir;
};

test('a picture older than its code by more than the margin is stale, and fresh within it', () => {
  const age = pictureAge(repo, 'media/view.png', ['view/'], 30);
  assert.equal(age.verdict, 'stale');
  assert.equal(age.verdict === 'stale' && age.days, 59);
  assert.deepEqual(pictureAge(repo, 'media/view.png', ['view/'], 90), { verdict: 'fresh' });
  assert.deepEqual(
    pictureAge(repo, 'media/view.png', ['other.txt'], 31),
    { verdict: 'fresh' },
    '31 days: at the margin',
  );
});

test('a depth-1 clone cannot tell a picture older than its first commit: unknown, never a pass', () => {
  const age = pictureAge(shallow(1), 'media/view.png', ['view/'], 30);
  assert.equal(age.verdict, 'unknown');
  assert.match(age.verdict === 'unknown' ? age.why : '', /shallow clone/);
});

test('a shallow clone judges what its history bounds: code changed past the margin after its oldest commit', () => {
  const dir = shallow(2); // Feb 1 and Mar 1: the picture reads as changed Feb 1 at the latest
  assert.equal(pictureAge(dir, 'media/view.png', ['view/'], 20).verdict, 'stale', '28 days at least');
  assert.equal(pictureAge(dir, 'media/view.png', ['view/'], 30).verdict, 'unknown');
  assert.deepEqual(pictureAge(dir, 'view/page.ts', ['media/'], 0), { verdict: 'fresh' }, 'code read at the boundary');
});
