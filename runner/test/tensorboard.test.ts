// TensorBoard event files written without a native install, read back by a decoder that shares nothing with
// the writer: protobufjs against the relevant messages of TensorBoard's own event.proto and summary.proto
// (fixtures/tensorboard/, field numbers as in tensorboard/compat/proto/), and the TFRecord framing checked
// with a bit-by-bit CRC-32C written here (not the writer's table), itself checked against the standard's
// check value. A file TensorBoard would reject (bad CRC, wrong field, no version record) fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { readMetrics } from '../src/records';
import { writeReport } from '../src/report/report';
import { tempDir } from './helpers/tmp';

const FIXTURES = path.join(__dirname, 'fixtures');

/** CRC-32C bit by bit (reflected Castagnoli polynomial 0x82f63b78), independent of the writer's table. */
function crc32cBitwise(bytes: Uint8Array): number {
  let crc = ~0 >>> 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0x82f63b78 & -(crc & 1));
  }
  return ~crc >>> 0;
}
/** TFRecord's mask (TensorFlow core/lib/hash/crc32c.h): rotate right 15, add 0xa282ead8. */
const masked = (crc: number) => (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;

/** Splits a TFRecord file into its records' data, checking both masked CRCs of each. */
function readRecords(file: Buffer): Buffer[] {
  const records: Buffer[] = [];
  let at = 0;
  while (at < file.length) {
    const length = Number(file.readBigUInt64LE(at));
    assert.equal(file.readUInt32LE(at + 8), masked(crc32cBitwise(file.subarray(at, at + 8))), `length CRC of the record at byte ${at}`);
    const data = file.subarray(at + 12, at + 12 + length);
    assert.equal(data.length, length, 'a record runs past the end of the file');
    assert.equal(file.readUInt32LE(at + 12 + length), masked(crc32cBitwise(data)), `data CRC of the record at byte ${at}`);
    records.push(data);
    at += 12 + length + 4;
  }
  return records;
}

test('the independent CRC-32C gives the standard check value', () => {
  // RFC 3720 (iSCSI) B.4 / the CRC catalogue: CRC-32C of "123456789" is 0xe3069283.
  assert.equal(crc32cBitwise(Buffer.from('123456789')), 0xe3069283);
});

test("report writes a TensorBoard event file that TensorBoard's protos decode: version first, then every metric per update", async () => {
  const dir = tempDir('rewardsmith-tensorboard-');
  const run = path.join(dir, 'run');
  cpSync(path.join(FIXTURES, 'runs', 'tree-dense-s0'), run, { recursive: true });
  const { messages } = await writeReport([run]);
  assert.ok(messages.includes(`TensorBoard: tensorboard --logdir ${path.join(run, 'tensorboard')}`), messages.join('\n'));
  const files = readdirSync(path.join(run, 'tensorboard'));
  assert.equal(files.length, 1);
  assert.match(files[0]!, /^events\.out\.tfevents\.\d+\./, 'TensorBoard only reads files named *tfevents*');

  // keepCase: the fields by their names in the .proto (wall_time, simple_value), not protobufjs's camelCase.
  const root = await new protobuf.Root().load(path.join(FIXTURES, 'tensorboard', 'event.proto'), { keepCase: true });
  const Event = root.lookupType('tensorboard.Event');
  const events = readRecords(readFileSync(path.join(run, 'tensorboard', files[0]!))).map(
    (data) =>
      Event.toObject(Event.decode(data), { longs: Number }) as {
        wall_time: number;
        step?: number;
        file_version?: string;
        summary?: { value: { tag: string; simple_value: number }[] };
      },
  );
  assert.equal(events[0]!.file_version, 'brain.Event:2');
  assert.equal(events[0]!.summary, undefined);
  const metrics = readMetrics(run);
  const scalars = events.slice(1);
  assert.equal(scalars.length, metrics.length, 'one event per update');
  scalars.forEach((e, i) => {
    const m = metrics[i]!;
    assert.equal(e.step, m.frames, 'the step is the training frames, as the report and CSV count them');
    assert.ok(e.wall_time > 1.5e9 && e.wall_time >= events[0]!.wall_time, `wall_time ${e.wall_time} is seconds since the epoch`);
    const byTag = new Map(e.summary!.value.map((v) => [v.tag, v.simple_value]));
    for (const key of ['mean_return', 'policy_loss', 'value_loss', 'entropy', 'kl', 'fps'] as const)
      assert.equal(byTag.get(`train/${key}`), Math.fround(m[key]), `update ${m.update} train/${key}`);
    assert.equal(byTag.get('train/success_rate'), m.success_rate === null ? undefined : Math.fround(m.success_rate));
  });

  // A second report replaces the file rather than adding one that would draw every point twice.
  await writeReport([run]);
  assert.equal(readdirSync(path.join(run, 'tensorboard')).length, 1);
});
