"""The npaflow worker process: configuration, client connection, task queues, registration."""
