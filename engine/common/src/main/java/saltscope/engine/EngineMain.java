package saltscope.engine;

import java.util.concurrent.CountDownLatch;

/**
 * The lifecycle both launchers share: parse the arguments, create the product's runner, close it on
 * SIGTERM, start this JVM's node, exit 1 if it cannot start. What differs per product is a
 * {@link Product}.
 */
public final class EngineMain {
    /** One product: its name, the settings only it needs, and how its runner starts a node. */
    public interface Product<R extends AutoCloseable> {
        /** "OpenSearch" or "Elasticsearch", for messages. */
        String name();

        /** The shared settings ({@link NodeSettings#common}) plus the product's own. */
        NodeSettings settings(EngineArgs a);

        /** Creates, without starting it, the runner that will hold node {@code a.node} (and no other). */
        R runner(EngineArgs a);

        /** Starts node {@code a.node} with these settings; returns once it is started (maybe not yet joined). */
        void start(R runner, EngineArgs a, NodeSettings settings) throws Exception;
    }

    private EngineMain() {
    }

    public static <R extends AutoCloseable> void run(final String[] argv, final Product<R> product)
            throws InterruptedException {
        // Must be set before any Netty class loads (scripts/engine.sh passes them with -D too).
        System.setProperty("opensearch.set.netty.runtime.available.processors", "false");
        System.setProperty("es.set.netty.runtime.available.processors", "false");
        final EngineArgs a;
        try {
            a = EngineArgs.parse(argv);
        } catch (final IllegalArgumentException e) {
            System.err.println("engine: " + e.getMessage());
            System.exit(2);
            return;
        }
        final String node = product.name() + " " + EngineArgs.nodeName(a.node);
        final R runner = product.runner(a);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final Exception e) {
                System.err.println("engine: close failed: " + e);
            } finally {
                stopped.countDown();
            }
        }, "saltscope-engine-shutdown"));
        try {
            product.start(runner, a, product.settings(a));
        } catch (final Throwable t) {
            System.err.println("engine: failed to start " + node + ": " + t);
            t.printStackTrace();
            System.exit(1); // the shutdown hook closes whatever did start
        }
        System.out.println("engine: " + node + " of cluster '" + a.cluster + "' (" + a.nodes + " node(s)) on http://127.0.0.1:"
                + a.httpPort() + ", transport port " + a.nodeTransportPort() + ", CORS origin " + a.corsOrigin);
        stopped.await();
    }
}
