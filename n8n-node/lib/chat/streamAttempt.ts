// One streamed attempt: a connected model's `stream()` read under the engine's limits for it.
// Until a chunk commits the call (the engine's rule, on the chunk's facts) nothing reaches the
// caller and a failure is an ordinary attempt outcome; the non-committing chunks before it (a
// role-only delta, message_start, response.created) are merged into the committing one, so
// their metadata is kept without a content-less chunk of their own. Once committed, every chunk
// goes to the caller as it arrives, and the stream's end is the attempt's one outcome: answered,
// or broken (dropped, idle past the limit, past the item's budget).
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import type { StreamStep } from '../engine';
import { Cancelled, type CallResult } from '../transport';
import { chunkFacts, type ChunkFacts } from './chunkFacts';
import { ANSWERED, errorText, outcomeOfModelError } from './outcome';
import type { ChatModel } from './wrapper';

export interface StreamedAttempt {
	model: ChatModel;
	messages: BaseMessage[];
	options: Record<string, unknown>;
	limits: StreamStep;
	cancel?: AbortSignal;
	/** The engine's rule: does a chunk with these facts commit the call? */
	commits: (facts: ChunkFacts) => boolean;
	/** Hand a chunk to the caller. */
	deliver: (chunk: AIMessageChunk) => void;
	/** The error a failed attempt threw (the model's own, thrown to the caller if it ends so). */
	failed: (error: unknown) => void;
}

type Fired = 'first_chunk' | 'idle' | 'total' | undefined;

export async function streamAttempt(a: StreamedAttempt): Promise<CallResult> {
	if (a.cancel?.aborted) throw new Cancelled();
	const abort = new AbortController();
	let fired: Fired;
	const fire = (why: Fired) => () => {
		fired = why;
		abort.abort();
	};
	const onCancel = () => abort.abort();
	a.cancel?.addEventListener('abort', onCancel);
	const started = Date.now();
	const timers = {
		first: setTimeout(fire('first_chunk'), a.limits.first_chunk_ms),
		total: setTimeout(fire('total'), a.limits.total_ms),
		idle: undefined as ReturnType<typeof setTimeout> | undefined,
	};
	let pending: AIMessageChunk | undefined;
	let committed = false;
	try {
		const stream = await a.model.stream(a.messages, { ...a.options, signal: abort.signal });
		for await (const chunk of stream as AsyncIterable<AIMessageChunk>) {
			if (committed) {
				a.deliver(chunk);
			} else {
				pending = pending ? (pending.concat(chunk) as AIMessageChunk) : chunk;
				if (!a.commits(chunkFacts(chunk))) continue;
				committed = true;
				clearTimeout(timers.first);
				a.deliver(pending);
				pending = undefined;
			}
			clearTimeout(timers.idle);
			timers.idle = setTimeout(fire('idle'), a.limits.idle_ms);
		}
		// An answer with nothing that commits (an empty text): still the answer.
		if (!committed && pending) a.deliver(pending);
		return { outcome: ANSWERED, body: undefined, ms: Date.now() - started };
	} catch (error) {
		if (a.cancel?.aborted) throw new Cancelled();
		a.failed(error);
		const ms = Date.now() - started;
		if (committed) {
			const seen = outcomeOfModelError(error);
			const code =
				fired === 'idle'
					? 'IDLE_TIMEOUT'
					: fired === 'total'
						? 'TIMEOUT'
						: seen.kind === 'status'
							? String(seen.status)
							: seen.code;
			return { outcome: { kind: 'broken', code }, body: errorText(error), ms };
		}
		const outcome = fired
			? ({ kind: 'error', code: 'TIMEOUT' } as const)
			: outcomeOfModelError(error);
		return { outcome, body: errorText(error), ms };
	} finally {
		clearTimeout(timers.first);
		clearTimeout(timers.total);
		clearTimeout(timers.idle);
		a.cancel?.removeEventListener('abort', onCancel);
	}
}
