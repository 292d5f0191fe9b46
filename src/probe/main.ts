// `npm run probe-hub`: the probe as a process. Reads the gateway's settings
// as the gateway does (.env, then the environment), prints the report and
// exits with its code.
import { loadEnvFile } from '../config/load.ts'
import { runProbe } from './run.ts'

loadEnvFile()
const outcome = await runProbe(process.argv.slice(2), process.env)
process.stdout.write(outcome.stdout)
process.stderr.write(outcome.stderr)
process.exitCode = outcome.code
