// The functions that hand a thrown error to the engine (lib/errorFacts.ts, the chat model's
// outcome, Call Chain's transport through it) judged by what the engine reads them as. The
// errors are shaped as Node and the clients throw them: a DNS failure as undici's fetch reports
// it (TypeError "fetch failed", the getaddrinfo error under `cause`, code EAI_AGAIN, which this
// machine's resolver never produces: it answers ENOTFOUND), axios' cut-off body, n8n's wrapper.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readAs } from './engine-reading.mjs';

const require = createRequire(import.meta.url);
const { factsOfError, CLIENT_ERROR } = require('../../dist/lib/errorFacts.js');
const { outcomeOfModelError, answered } = require('../../dist/lib/chat/outcome.js');

function dnsFailure(code) {
	const socket = Object.assign(new Error(`getaddrinfo ${code} vendor.example`), {
		errno: -3001,
		code,
		syscall: 'getaddrinfo',
		hostname: 'vendor.example',
	});
	return new TypeError('fetch failed', { cause: socket });
}

test('a DNS failure with an underscore in its code is retried, on Call Chain and the chat model', () => {
	const get = readAs(factsOfError(dnsFailure('EAI_AGAIN')));
	assert.deepEqual(get, {
		outcome: 'EAI_AGAIN',
		health: 'failure',
		retried: true,
		retryAfter: false,
	});
	// The chat model: an SDK's connection error over fetch's, a POST that says it is idempotent.
	const sdk = Object.assign(new Error('Connection error.'), {
		name: 'APIConnectionError',
		cause: dnsFailure('EAI_AGAIN'),
	});
	const chat = readAs(outcomeOfModelError(sdk), { method: 'POST', idempotent: true });
	assert.equal(chat.outcome, 'EAI_AGAIN');
	assert.equal(chat.retried, true, 'safe to repeat because it says so');
	assert.equal(
		readAs(outcomeOfModelError(sdk), { method: 'POST' }).retried,
		false,
		'a bare POST is not',
	);
	// ENOTFOUND (what this machine answers): the provider failed, not worth repeating.
	const nx = readAs(factsOfError(dnsFailure('ENOTFOUND')));
	assert.deepEqual([nx.outcome, nx.health, nx.retried], ['ENOTFOUND', 'failure', false]);
});

test('a body cut off under axios is a reset connection; n8n 1 keeps the client error aside', () => {
	const cut = Object.assign(new Error('stream has been aborted'), { code: 'ERR_BAD_RESPONSE' });
	assert.equal(readAs(factsOfError(cut)).outcome, 'ECONNRESET');
	const n8nError = Object.assign(new Error('The service was not able to process your request'), {
		name: 'NodeApiError',
		httpCode: '503',
	});
	n8nError[CLIENT_ERROR] = Object.assign(new Error('503 busy'), {
		status: 503,
		headers: new Headers({ 'retry-after': '2' }),
	});
	const r = readAs(outcomeOfModelError(n8nError));
	assert.deepEqual([r.outcome, r.retryAfter], ['503', true]);
});

test('missing status, a status of n8n class text, an answer', () => {
	const classOnly = Object.assign(new Error('The service failed to process your request'), {
		name: 'NodeApiError',
		httpCode: '5XX',
	});
	assert.equal(readAs(factsOfError(classOnly)).outcome, '5XX');
	assert.equal(readAs(factsOfError(new Error('no status, no code'))).outcome, 'EUNKNOWN');
	assert.deepEqual(readAs(answered(undefined)), {
		outcome: '200',
		health: 'success',
		retried: false,
		retryAfter: false,
	});
});

test("ollama-js's ResponseError (status in `status_code` only), under n8n's wrapper: its status decides", () => {
	const ollama = (status, message) =>
		Object.assign(new Error(message), {
			name: 'ResponseError',
			error: message,
			status_code: status,
		});
	const wrapped = (cause) =>
		Object.assign(new Error('Bad request - please check your parameters'), {
			name: 'NodeApiError',
			cause,
		});
	const bad = readAs(outcomeOfModelError(wrapped(ollama(400, 'invalid options: temperature'))));
	assert.deepEqual([bad.outcome, bad.health, bad.retried], ['400', 'neutral', false]);
	assert.equal(readAs(factsOfError(ollama(500, 'upstream 500'))).outcome, '500');
	assert.equal(readAs(outcomeOfModelError(ollama(429, 'too many requests'))).outcome, '429');
});

test("an AWS SDK v3 error (Bedrock's: the status in `$metadata.httpStatusCode` only), under n8n's wrapper: its status decides", () => {
	const aws = (name, status, fault) =>
		Object.assign(new Error(`${name} from the service`), {
			name,
			$fault: fault,
			$metadata: { httpStatusCode: status, requestId: 'r', attempts: 1, totalRetryDelay: 0 },
		});
	const wrapped = (cause) =>
		Object.assign(new Error('Bad request - please check your parameters'), {
			name: 'NodeApiError',
			cause,
		});
	const bad = readAs(outcomeOfModelError(wrapped(aws('ValidationException', 400, 'client'))));
	assert.deepEqual([bad.outcome, bad.health, bad.retried], ['400', 'neutral', false]);
	assert.equal(readAs(factsOfError(aws('InternalServerException', 500, 'server'))).outcome, '500');
	assert.equal(
		readAs(outcomeOfModelError(aws('ThrottlingException', 429, 'client'))).outcome,
		'429',
	);
});
