/**
 * The one error mapping: client-visible errors keep their code and message; anything else becomes a bare INTERNAL
 * (logged with its cause), so SQL text and driver messages never reach a client.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { HttpError, invalidArgument, toConnectError, toHttpError } from '../../src/gateway/http/errors.js';
import { createLogger } from '../../src/shared/logger.js';

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) });
  return { logger: createLogger({ level: 'info', destination, pretty: false }), lines };
}

describe('gateway error mapping', () => {
  test('ConnectErrors pass through unchanged', () => {
    const { logger } = capturingLogger();
    const err = invalidArgument('page_token is malformed');
    assert.equal(toConnectError(err, logger, 'ListObjects'), err);
    assert.equal(toConnectError(new ConnectError('gone', Code.NotFound), logger, 'x').code, Code.NotFound);
  });

  test('unknown failures become INTERNAL without details, and the cause is logged', () => {
    const { logger, lines } = capturingLogger();
    const mapped = toConnectError(
      new Error('duplicate key value violates unique constraint "objects_pkey" in insert into objects'),
      logger,
      'ListObjects',
    );
    assert.equal(mapped.code, Code.Internal);
    assert.equal(mapped.rawMessage, 'internal error');
    assert.ok(lines.some((l) => l.includes('objects_pkey') && l.includes('ListObjects failed')));
  });

  test('REST errors: HttpError keeps its status, anything else is a 500 without details', () => {
    const { logger } = capturingLogger();
    assert.deepEqual(toHttpError(new HttpError(404, 'not_found', 'nope'), logger), {
      status: 404,
      body: { error: 'not_found', message: 'nope' },
    });
    assert.deepEqual(toHttpError(new Error('relation "x" does not exist'), logger), {
      status: 500,
      body: { error: 'internal', message: 'internal error' },
    });
  });
});
