import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ipcCodec } from '../../../src/ipc/compression/codec-registry.js';
import type { IpcCodec } from '../../../src/protocol/media-types.js';
import { codeThrownBy } from '../../support/code-of.js';

test('a name that is no IPC codec is CODEC_UNAVAILABLE from the catalogue', () => {
  assert.equal(
    codeThrownBy(() => ipcCodec('snappy' as IpcCodec)),
    'S2SP_ERR_CODEC_UNAVAILABLE',
  );
});
