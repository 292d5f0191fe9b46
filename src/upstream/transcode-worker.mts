// A transcoding thread (transcode-pool.ts): piscina runs its default export
// on each task. Kept to this, so that the work itself (transcode-thread.ts)
// can also be tested on the main thread.
import { workerData } from 'node:worker_threads'
import { threadHandler, type ThreadSetup } from './transcode-thread.ts'

export default threadHandler(workerData as ThreadSetup)
