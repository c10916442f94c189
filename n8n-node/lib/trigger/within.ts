/** Waits for `work` to settle, or `ms`, whichever comes first: a closing trigger lets the event it
 * is handing to n8n finish, but a hand-over that never ends does not hold the deactivation. */
export async function settledWithin(work: Promise<unknown> | undefined, ms: number): Promise<void> {
	let timer: NodeJS.Timeout | undefined;
	await Promise.race([
		work?.catch(() => undefined),
		new Promise((r) => (timer = setTimeout(r, ms))),
	]);
	clearTimeout(timer);
}
