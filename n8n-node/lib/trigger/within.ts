/** Waits for `work` to settle, or until `deadline` (epoch ms), whichever comes first: a closing
 * trigger lets the event it is handing to n8n finish, but a hand-over that never ends does not
 * hold the deactivation. One deadline serves the several waits of one close. */
export async function settledBy(
	work: Promise<unknown> | undefined,
	deadline: number,
): Promise<void> {
	let timer: NodeJS.Timeout | undefined;
	await Promise.race([
		work?.catch(() => undefined),
		new Promise((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now())))),
	]);
	clearTimeout(timer);
}
