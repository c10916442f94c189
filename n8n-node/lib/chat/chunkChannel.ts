// Chunks handed from the attempt that reads a model's stream to the generator the root node
// iterates: the attempt runs inside the engine's item loop (its outcome is only known when the
// stream ends), while the caller must get every chunk as it arrives.
export class ChunkChannel<T> {
	private readonly queue: T[] = [];
	private wake: (() => void) | undefined;
	private ended = false;
	private failure: { error: unknown } | undefined;

	push(chunk: T): void {
		this.queue.push(chunk);
		this.signal();
	}

	/** No more chunks; with `error`, the reader throws it once the queue is drained. */
	end(error?: { error: unknown }): void {
		this.ended = true;
		this.failure = error;
		this.signal();
	}

	async *drain(): AsyncGenerator<T> {
		for (;;) {
			if (this.queue.length > 0) {
				yield this.queue.shift() as T;
				continue;
			}
			if (this.ended) {
				if (this.failure) throw this.failure.error;
				return;
			}
			await new Promise<void>((resolve) => (this.wake = resolve));
		}
	}

	private signal() {
		const wake = this.wake;
		this.wake = undefined;
		wake?.();
	}
}
