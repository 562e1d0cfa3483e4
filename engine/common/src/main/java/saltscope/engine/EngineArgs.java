package saltscope.engine;

/**
 * The launcher's command line: this JVM runs node {@code --node} of a {@code --nodes}-node cluster.
 *
 * <pre>
 *   --port P            HTTP port of node 1 (default 9200); node i listens on P+i-1
 *   --transport-port T  transport port of node 1 (default P+100); node i uses T+i-1
 *   --nodes N           cluster size (default 1: a single-node cluster)
 *   --node I            the node this JVM runs, 1..N (default 1)
 *   --base DIR          root of the nodes' homes; node i keeps DIR/node_i/{data,logs,config}
 *   --cluster NAME      cluster name (default saltscope-P)
 *   --cors-origin O     CORS allow-origin: a comma list of origins or a /regex/
 *                       (default: the demo's nginx, http://127.0.0.1:8080 and http://localhost:8080)
 * </pre>
 */
public final class EngineArgs {
    /** The origins of the demo's nginx (scripts/demo.sh serves the app on port 8080). */
    public static final String DEFAULT_CORS_ORIGIN = "http://127.0.0.1:8080,http://localhost:8080";

    public int port = 9200;
    public int transportPort = -1;
    public int nodes = 1;
    public int node = 1;
    public String base = "engine-home";
    public String cluster;
    public String corsOrigin = DEFAULT_CORS_ORIGIN;

    public static EngineArgs parse(final String[] args) {
        final EngineArgs a = new EngineArgs();
        for (int i = 0; i < args.length; i++) {
            final String name = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(name + " needs a value");
            }
            final String v = args[++i];
            switch (name) {
            case "--port" -> a.port = number(name, v);
            case "--transport-port" -> a.transportPort = number(name, v);
            case "--nodes" -> a.nodes = number(name, v);
            case "--node" -> a.node = number(name, v);
            case "--base" -> a.base = v;
            case "--cluster" -> a.cluster = v;
            case "--cors-origin" -> a.corsOrigin = v.trim();
            default -> throw new IllegalArgumentException("unknown argument: " + name);
            }
        }
        if (a.transportPort < 0) {
            a.transportPort = a.port + 100;
        }
        if (a.cluster == null) {
            a.cluster = "saltscope-" + a.port;
        }
        if (a.nodes < 1 || a.node < 1 || a.node > a.nodes) {
            throw new IllegalArgumentException("--node must be in 1..--nodes (got node " + a.node + " of " + a.nodes + ")");
        }
        if (a.corsOrigin.isEmpty()) {
            throw new IllegalArgumentException("--cors-origin is empty");
        }
        return a;
    }

    private static int number(final String name, final String v) {
        try {
            return Integer.parseInt(v);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a number (got '" + v + "')");
        }
    }

    /** This node's HTTP port. */
    public int httpPort() {
        return port + node - 1;
    }

    /** This node's transport port. */
    public int nodeTransportPort() {
        return transportPort + node - 1;
    }

    /** Node names are node-1..node-N in every JVM of the cluster. */
    public static String nodeName(final int i) {
        return "node-" + i;
    }
}
