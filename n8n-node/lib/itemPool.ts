// A small pool: `concurrency` items in flight at once, each started once, in input order.
export async function eachInPool(
	count: number,
	concurrency: number,
	one: (i: number) => Promise<void>,
): Promise<void> {
	let next = 0;
	const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
		while (next < count) await one(next++);
	});
	await Promise.all(lanes);
}
