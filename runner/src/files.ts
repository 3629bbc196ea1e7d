// Files written into folders that may be someone else's: a run folder a colleague sent, a sweep or run folder
// on a cluster's shared disk, the folder of a reward file a run's records name. Nothing here writes through a
// symbolic link: a temporary file is created exclusively (O_EXCL, which also fails on a dangling link), a
// destination that is a link is refused rather than followed, and a file appended to is opened with
// O_NOFOLLOW. Whole files are replaced atomically (temporary file, then rename), so a file that exists is
// complete and a crash never leaves one half written.
import { closeSync, constants, fchmodSync, lstatSync, mkdirSync, openSync, readlinkSync, renameSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Rewardsmith's cache folder `name`: $XDG_CACHE_HOME/rewardsmith/NAME (default ~/.cache), for what is costly to make again. */
export function cacheDir(name: string): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'rewardsmith', name);
}

/**
 * Whether `target` is `folder` itself or lies inside it, by their paths as given (resolved, no link followed):
 * `..notes.json` in the folder is inside, `../notes.json` and a path on another drive are not.
 */
export function isInsideFolder(folder: string, target: string): boolean {
  const rel = path.relative(path.resolve(folder), path.resolve(target));
  return !(rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel));
}

/** A write refused because the path is a symbolic link or something else that is not a plain file. */
export class UnsafePathError extends Error {
  override name = 'UnsafePathError';
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function linkRefused(file: string): UnsafePathError {
  let target = '';
  try {
    target = ` (to ${readlinkSync(file)})`;
  } catch {
    /* gone since: the message still names the path */
  }
  return new UnsafePathError(`${file} is a symbolic link${target}; refusing to write through it, nothing was written (remove the link if it is yours)`);
}

/** Refuses a path that is a symbolic link, or anything but a plain file, before it is replaced or appended to. */
function checkReplaceable(file: string): Stats | null {
  const st = lstatOrNull(file);
  if (st?.isSymbolicLink()) throw linkRefused(file);
  if (st && !st.isFile()) throw new UnsafePathError(`${file} is not a plain file; refusing to replace it, nothing was written`);
  return st;
}

/** Creates `file` and writes `data`, failing when anything (a file, a link, a dangling link) is already there. */
export function writeNewFile(file: string, data: string | Uint8Array, mode = 0o666): void {
  let fd: number;
  try {
    fd = openSync(file, 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (lstatOrNull(file)?.isSymbolicLink()) throw linkRefused(file);
    throw new UnsafePathError(`${file} already exists; refusing to overwrite it, nothing was written`);
  }
  try {
    if (mode !== 0o666) fchmodSync(fd, mode);
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `file` with `data` whole or not at all: a temporary file beside it (`file` + `tmpSuffix`) created
 * exclusively, then renamed over it (a rename replaces a link rather than following it, so a link placed
 * between the check and the rename harms nothing). A destination that is a symbolic link is refused; a
 * temporary file left by a killed write is replaced, a link in its place refused. An existing file keeps its
 * permissions. Creates the folder when it is missing.
 */
export function writeAtomic(file: string, data: string | Uint8Array, opts: { tmpSuffix?: string; mode?: number } = {}): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const existing = checkReplaceable(file);
  const tmp = file + (opts.tmpSuffix ?? '.tmp');
  if (checkReplaceable(tmp)) unlinkSync(tmp);
  writeNewFile(tmp, data, opts.mode ?? (existing ? existing.mode & 0o7777 : 0o666));
  try {
    renameSync(tmp, file);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
}

/** Opens `file` for appending (created when missing), refusing a symbolic link in its place; returns the descriptor. */
export function openForAppend(file: string): number {
  try {
    return openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o666);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefused(file);
    throw err;
  }
}

/** Appends `data` to `file` (created when missing) without following a symbolic link in its place. */
export function appendNoFollow(file: string, data: string | Uint8Array): void {
  const fd = openForAppend(file);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** Creates the folder `dir` (and its parents) unless it is there; refuses a symbolic link in its place. */
export function makeFolder(dir: string): void {
  const st = lstatOrNull(dir);
  if (st?.isSymbolicLink()) throw linkRefused(dir);
  if (st && !st.isDirectory()) throw new UnsafePathError(`${dir} is not a folder; nothing was written`);
  mkdirSync(dir, { recursive: true });
}

/**
 * Creates `dir`, a folder below `root` (the folder the user named: a sweep's, a table's), one level at a time,
 * refusing a symbolic link at every level below `root`: a linked `runs/` would lead every run written there
 * out of the folder.
 */
export function makeFolderBelow(root: string, dir: string): void {
  if (!isInsideFolder(root, dir)) throw new UnsafePathError(`${dir} is not inside ${root}; nothing was written`);
  let at = path.resolve(root);
  mkdirSync(at, { recursive: true });
  for (const part of path.relative(at, path.resolve(dir)).split(path.sep).filter(Boolean)) makeFolder((at = path.join(at, part)));
}
