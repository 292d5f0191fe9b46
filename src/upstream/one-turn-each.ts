/**
 * Runs jobs one per turn of the event loop (setImmediate), in arrival order.
 * Reading a 1 MB SP2 list takes about 10 ms; when dozens arrive together,
 * their continuations would otherwise all run in one turn, holding every
 * other request (and the load-shedding probe, which then sheds) for their sum.
 * One per turn lets I/O and timers in between: the same work, with the event
 * loop's delay bounded by one job. Written here: queue libraries (p-queue,
 * fastq) start the next job on a microtask, which does not yield to I/O.
 */
export function oneTurnEach () {
  const jobs: Array<() => void> = []
  let scheduled = false
  function next () {
    jobs.shift()?.()
    if (jobs.length > 0) setImmediate(next)
    else scheduled = false
  }
  return {
    run<T> (work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        jobs.push(() => {
          try {
            resolve(work())
          } catch (error) {
            reject(error)
          }
        })
        if (!scheduled) {
          scheduled = true
          setImmediate(next)
        }
      })
    }
  }
}
