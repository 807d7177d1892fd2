/** Whether `promise` settles (either way) within `ms`; the timer is cleared either way, so it holds nothing open. */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(settled, settled), late]);
  } finally {
    clearTimeout(timer);
  }
}

const settled = (): true => true;
