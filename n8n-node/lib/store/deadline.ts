// One store operation's time limit, shared by the rows' and the tickets' fail-open/closed guards:
// an operation that does not answer in time rejects, and its caller falls back.

export async function withinDeadline<T>(operation: Promise<T>, timeoutMs: number): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	try {
		return await Promise.race([
			operation,
			new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
			}),
		]);
	} finally {
		clearTimeout(timer);
	}
}
