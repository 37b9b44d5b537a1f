import { runWorker } from '../../protocol/worker-runtime';
import { createShellService } from './service';

/**
 * Entry of a shell pool worker process, forked by the supervisor. Its `init` config is the
 * validated `shell` section of the configuration.
 */
runWorker((config, log) => createShellService(config, log));
