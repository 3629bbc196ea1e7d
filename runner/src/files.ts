// Files written into folders that may be someone else's: a run folder a colleague sent, a sweep or run folder
// on a cluster's shared disk, the folder of a reward file a run's records name. Nothing here writes through a
// symbolic link: a temporary file is created exclusively (O_EXCL, which also fails on a dangling link), a
// destination that is a link is refused rather than followed, and a file appended to is opened with
// O_NOFOLLOW. Whole files are replaced atomically (temporary file, then rename), so a file that exists is
// complete and a crash never leaves one half written. Reading such a folder's file is `readRecordBytes`: no link
// out of the folder, a bounded size.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
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

/**
 * Creates `file` and writes `data`, failing when anything (a file, a link, a dangling link) is already there:
 * opened with O_EXCL|O_NOFOLLOW, so a link planted at its name is never written through. Given `root`, the opened
 * file must lie inside it once links are resolved (a folder on its way swapped for a link), else nothing is written.
 */
export function writeNewFile(file: string, data: string | Uint8Array, mode = 0o666, root?: string): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ELOOP') throw err;
    if (lstatOrNull(file)?.isSymbolicLink()) throw linkRefused(file);
    throw new UnsafePathError(`${file} already exists; refusing to overwrite it, nothing was written`);
  }
  try {
    if (root !== undefined) {
      const opened = openedPath(fd, file, fstatSync(fd));
      // Left where it is, empty: removing it would be one more act through a path that leads out of `root`.
      if (opened === null || !isInsideFolder(realpathSync(root), opened))
        throw new UnsafePathError(`${file}: not written: it resolves to ${opened ?? 'a replaced file'}, outside ${root}`);
    }
    if (mode !== 0o666) fchmodSync(fd, mode);
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `file`, which lies below `root` (the folder the user named: a run's, a sweep's, a cache's), with
 * `data` whole or not at all. Missing folders between `root` and `file` are made one level at a time and a
 * symbolic link at any level below `root` is refused, so a linked `checkpoint/` or `eval/` in someone else's
 * folder cannot lead the write out of it (links above `root` are the user's own and followed). The temporary
 * file beside it (`file` + `tmpSuffix`) is created exclusively and without following a link (O_EXCL|O_NOFOLLOW),
 * checked to lie inside `root` once opened, then renamed over `file` (a rename replaces a link rather than
 * following it, so a link placed between the check and the rename harms nothing). A destination that is a
 * symbolic link is refused; a temporary file left by a killed write is replaced, a link in its place refused.
 * An existing file keeps its permissions. A refusal is an UnsafePathError naming `file` and why.
 */
export function writeAtomic(root: string, file: string, data: string | Uint8Array, opts: { tmpSuffix?: string; mode?: number } = {}): void {
  const folder = path.dirname(file);
  if (!isInsideFolder(root, folder)) throw new UnsafePathError(`${file}: not inside ${root}; refusing to write it, nothing was written`);
  try {
    makeFolderBelow(root, folder);
  } catch (err) {
    if (err instanceof UnsafePathError) throw new UnsafePathError(`${file}: ${err.message}`);
    throw err;
  }
  const existing = checkReplaceable(file);
  const tmp = file + (opts.tmpSuffix ?? '.tmp');
  if (checkReplaceable(tmp)) unlinkSync(tmp);
  writeNewFile(tmp, data, opts.mode ?? (existing ? existing.mode & 0o7777 : 0o666), root);
  // The folder made above may have been swapped for a link since: the rename's folder must still be inside.
  const realFolder = realpathSync(folder);
  if (!isInsideFolder(realpathSync(root), realFolder))
    throw new UnsafePathError(`${file}: not written: its folder ${folder} now resolves to ${realFolder}, outside ${root}`);
  try {
    renameSync(tmp, file);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
}

/**
 * Opens `file` for appending (created when missing), refusing a symbolic link in its place and anything but a
 * plain file (opened without waiting, so a FIFO there is refused rather than waited on); returns the descriptor.
 */
export function openForAppend(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0), 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw linkRefused(file);
    if (code === 'ENXIO') throw new UnsafePathError(`${file} is not a plain file (a FIFO or a socket); refusing to write to it, nothing was written`);
    throw err;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new UnsafePathError(`${file} is not a plain file; refusing to write to it, nothing was written`);
  }
  return fd;
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

// ----- the checked read of a shared folder's file ---------------------------------------------------------

/** A problem with the run folder's files, with the file (and line) it is in. */
export class RunRecordError extends Error {
  override name = 'RunRecordError';
}

/**
 * The most bytes a record may hold to be read whole. Far above any run's (a held-out episode is ~50 kB in
 * episodes.ndjson, so 1,000 of them ~50 MB; a checkpoint's weights and optimizer a few hundred kB), and below
 * the longest string Node can hold (512 MiB), so a forged size is refused unread rather than met as a crash.
 */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

/**
 * The one reader of a folder's own files (a run's records and checkpoint, a loop's, a sweep's, a table's), as
 * bytes. The folder may be someone else's, so a file that is a folder or not a plain file (a FIFO, a device),
 * cannot be read, holds more than `maxBytes` (MAX_RECORD_BYTES unless less is asked), or lies outside `folder`
 * once its links are resolved (the file a symbolic link, or a folder on its way such as a run's `checkpoint/`)
 * is a RunRecordError naming the file and what is wrong with it, and nothing is read. `folder` is the file's own
 * by default; a caller that knows the folder the user named (a run folder, a checkpoint folder) passes it, so
 * that a linked subfolder cannot lead out of it.
 *
 * The file is opened first and what is checked is the opened file, never the path again: a link swapped in
 * between a check and the open could otherwise lead the read out of the folder. It is opened without waiting
 * (O_NONBLOCK), so that a FIFO placed there is refused rather than waited on.
 */
export function readRecordBytes(file: string, folder = path.dirname(file), maxBytes = MAX_RECORD_BYTES): Buffer {
  const { fd, stats } = openRecord(file, folder);
  try {
    if (stats.size > maxBytes)
      throw new RunRecordError(
        `${file}: ${stats.size.toLocaleString('en-US')} bytes, more than the ${byteSize(maxBytes)} ${maxBytes === MAX_RECORD_BYTES ? 'a record' : 'this file'} may hold; not read`,
      );
    const bytes = Buffer.alloc(stats.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break; // shortened since fstat
      read += n;
    }
    return bytes.subarray(0, read);
  } catch (err) {
    throw err instanceof RunRecordError ? err : new RunRecordError(`${file}: cannot be read: ${(err as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * `readRecordBytes`'s open and checks without the read, for a file read a piece at a time as it grows (a job's
 * log): the descriptor of a plain file inside `folder` (the caller closes it) and its stats, else a RunRecordError.
 */
export function openRecord(file: string, folder = path.dirname(file)): { fd: number; stats: Stats } {
  try {
    const fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    try {
      const stats = fstatSync(fd);
      const opened = openedPath(fd, file, stats);
      if (opened === null) throw new RunRecordError(`${file}: replaced while it was being opened (a link swapped in?); not read`);
      if (!isInsideFolder(realpathSync(folder), opened)) throw new RunRecordError(`${file}: ${linkOutOf(file, folder, opened)}; not read`);
      if (stats.isDirectory()) throw new RunRecordError(`${file}: a folder, not a file`);
      if (!stats.isFile()) throw new RunRecordError(`${file}: not a plain file (${fileKind(stats)}); not read`);
      return { fd, stats };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  } catch (err) {
    if (err instanceof RunRecordError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'not readable (permission denied)'
          : code === 'ENXIO'
            ? 'not a plain file (a socket)'
            : (err as Error).message;
    throw new RunRecordError(`${file}: cannot be read: ${why}`);
  }
}

/**
 * Where the opened file `fd` (opened by the name `file`) lies, links resolved: on Linux the kernel's own name for
 * the descriptor; elsewhere `file` resolved again, which must still be the opened file (same device and inode),
 * else null (it was replaced since the open).
 */
function openedPath(fd: number, file: string, stats: Stats): string | null {
  if (process.platform === 'linux') {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      /* no /proc mounted: resolved by name below */
    }
  }
  const real = realpathSync(file);
  const now = statSync(real);
  return now.dev === stats.dev && now.ino === stats.ino ? real : null;
}

const fileKind = (s: Stats) => (s.isFIFO() ? 'a FIFO' : s.isCharacterDevice() || s.isBlockDevice() ? 'a device' : s.isSocket() ? 'a socket' : 'not a file');
const byteSize = (n: number) => (n >= 1024 * 1024 ? `${n / 1024 / 1024} MiB` : `${(n / 1024).toLocaleString('en-US')} KiB`);

/** How `file` (which resolves to `real`, outside `folder`) leads out: itself a link, or a folder on the way. */
function linkOutOf(file: string, folder: string, real: string): string {
  if (lstatSync(file).isSymbolicLink()) return `a symbolic link to ${real}, outside ${folder}`;
  for (let dir = path.dirname(file); isInsideFolder(folder, dir) && path.resolve(dir) !== path.resolve(folder); dir = path.dirname(dir))
    if (lstatSync(dir).isSymbolicLink()) return `in ${dir}, a symbolic link to ${realpathSync(dir)}, outside ${folder}`;
  return `resolves to ${real}, outside ${folder}`;
}
