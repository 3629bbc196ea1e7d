// TensorBoard event files written directly, with no native dependency: `tensorboard --logdir RUN/tensorboard`
// reads them as it reads TensorFlow's own. The format is small:
//  - a file of TFRecords, each: uint64 length (little-endian), masked CRC-32C of those 8 bytes (uint32),
//    the data, masked CRC-32C of the data (TensorFlow's core/lib/io/record_writer.cc; the mask is
//    core/lib/hash/crc32c.h `Mask`: rotate right by 15, add 0xa282ead8);
//  - each record's data one `Event` protocol buffer (tensorboard/compat/proto/event.proto): wall_time = 1
//    (double), step = 2 (int64), file_version = 3 (string), summary = 5 (Summary); the first event carries
//    only file_version "brain.Event:2";
//  - a Summary (summary.proto) holds repeated Value value = 1; a Value holds tag = 1 (string) and
//    simple_value = 2 (float), the scalar TensorBoard plots.
// The protobuf encoding here covers only those fields: varints, 64-bit, 32-bit and length-delimited fields.
import { readdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { makeFolder, writeAtomic } from '../files';

// CRC-32C (Castagnoli), reflected polynomial 0x82f63b78, as TFRecord uses.
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC32C_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: a CRC of data that itself holds CRCs is still well distributed. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One TFRecord: length, its masked CRC, the data, the data's masked CRC. */
export function tfRecord(data: Uint8Array): Buffer {
  const out = Buffer.alloc(8 + 4 + data.length + 4);
  out.writeBigUInt64LE(BigInt(data.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  out.set(data, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}

// ---- protocol buffer encoding of the few fields an Event with scalars needs ----

const WIRE_VARINT = 0;
const WIRE_64BIT = 1;
const WIRE_LENGTH = 2;
const WIRE_32BIT = 5;

function varint(value: bigint): number[] {
  // int64 fields encode negative numbers as their two's complement in 10 bytes.
  let v = BigInt.asUintN(64, value);
  const bytes: number[] = [];
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    bytes.push(v > 0n ? low | 0x80 : low);
  } while (v > 0n);
  return bytes;
}

const key = (field: number, wire: number) => varint(BigInt((field << 3) | wire));

function lengthDelimited(field: number, payload: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(key(field, WIRE_LENGTH)), Buffer.from(varint(BigInt(payload.length))), payload]);
}

function double(field: number, value: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value);
  return Buffer.concat([Buffer.from(key(field, WIRE_64BIT)), b]);
}

function float(field: number, value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeFloatLE(value);
  return Buffer.concat([Buffer.from(key(field, WIRE_32BIT)), b]);
}

const EVENT = { wallTime: 1, step: 2, fileVersion: 3, summary: 5 } as const;
const SUMMARY = { value: 1 } as const;
const VALUE = { tag: 1, simpleValue: 2 } as const;

/** An `Event` proto: the file's version marker, or scalars at one step. */
export function encodeEvent(e: { wallTime: number; step?: number; fileVersion?: string; scalars?: { tag: string; value: number }[] }): Buffer {
  const parts: Buffer[] = [double(EVENT.wallTime, e.wallTime)];
  if (e.step !== undefined && e.step !== 0) parts.push(Buffer.from([...key(EVENT.step, WIRE_VARINT), ...varint(BigInt(Math.trunc(e.step)))]));
  if (e.fileVersion !== undefined) parts.push(lengthDelimited(EVENT.fileVersion, Buffer.from(e.fileVersion, 'utf8')));
  if (e.scalars) {
    const values = e.scalars.map((s) =>
      lengthDelimited(SUMMARY.value, Buffer.concat([lengthDelimited(VALUE.tag, Buffer.from(s.tag, 'utf8')), float(VALUE.simpleValue, s.value)])),
    );
    parts.push(lengthDelimited(EVENT.summary, Buffer.concat(values)));
  }
  return Buffer.concat(parts);
}

export const TENSORBOARD_FILE_VERSION = 'brain.Event:2';

/** One point of a run's curves: its step (training frames), when it was recorded, and its scalars by tag. */
export interface ScalarStep {
  step: number;
  wallTime: number;
  scalars: { tag: string; value: number }[];
}

/**
 * Writes one event file (`events.out.tfevents.<seconds>.<host>`, the name TensorBoard looks for) into `dir`,
 * replacing the event files an earlier report wrote there, so a report run twice does not draw each point
 * twice. Non-finite values are left out (TensorBoard cannot plot them). Returns the file's path.
 */
export function writeEventFile(dir: string, steps: readonly ScalarStep[], startTime = steps[0]?.wallTime ?? Date.now() / 1000): string {
  // The folder is inside a run folder, which is shared input: never write through a link it holds.
  makeFolder(dir);
  for (const old of readdirSync(dir)) if (old.startsWith('events.out.tfevents.')) rmSync(path.join(dir, old), { force: true });
  const records = [tfRecord(encodeEvent({ wallTime: startTime, fileVersion: TENSORBOARD_FILE_VERSION }))];
  for (const s of steps) {
    const scalars = s.scalars.filter((v) => Number.isFinite(v.value));
    if (scalars.length > 0) records.push(tfRecord(encodeEvent({ wallTime: s.wallTime, step: s.step, scalars })));
  }
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_') || 'localhost';
  const file = path.join(dir, `events.out.tfevents.${Math.floor(startTime)}.${host}`);
  writeAtomic(dir, file, Buffer.concat(records));
  return file;
}
