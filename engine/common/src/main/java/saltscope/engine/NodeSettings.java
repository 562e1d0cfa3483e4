package saltscope.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Node settings as plain strings and lists, so that one place can write the settings that both products
 * share; each launcher copies them into its own product's {@code Settings.Builder}:
 * {@code settings.applyTo(builder::put, builder::putList)}.
 */
public final class NodeSettings {
    private final Map<String, Object> settings = new LinkedHashMap<>();

    public NodeSettings put(final String key, final Object value) {
        settings.put(key, String.valueOf(value));
        return this;
    }

    public NodeSettings putList(final String key, final List<String> values) {
        settings.put(key, List.copyOf(values));
        return this;
    }

    public NodeSettings putList(final String key, final String... values) {
        return putList(key, List.of(values));
    }

    @SuppressWarnings("unchecked")
    public void applyTo(final BiConsumer<String, String> put, final BiConsumer<String, List<String>> putList) {
        settings.forEach((k, v) -> {
            if (v instanceof List<?> list) {
                putList.accept(k, (List<String>) list);
            } else {
                put.accept(k, (String) v);
            }
        });
    }

    /**
     * The settings of node {@code a.node} that both products share.
     *
     * @param initialManagersKey the product's name for the bootstrap list of master-eligible nodes
     *        ({@code cluster.initial_master_nodes} or {@code cluster.initial_cluster_manager_nodes})
     */
    public static NodeSettings common(final EngineArgs a, final String initialManagersKey) {
        final NodeSettings s = new NodeSettings();
        s.put("node.name", EngineArgs.nodeName(a.node));
        s.put("cluster.name", a.cluster);
        s.put("network.host", "127.0.0.1");
        s.put("http.port", a.httpPort());
        s.put("transport.port", a.nodeTransportPort());
        if (a.nodes == 1) {
            s.put("discovery.type", "single-node");
        } else {
            // Every node is its own JVM (scripts/engine.sh starts them together) and finds the
            // others through their transport ports. All N are master-eligible and bootstrap the
            // cluster together, so it keeps a quorum when one of 3+ goes away.
            final List<String> seeds = new ArrayList<>();
            final List<String> names = new ArrayList<>();
            for (int i = 1; i <= a.nodes; i++) {
                seeds.add("127.0.0.1:" + (a.transportPort + i - 1));
                names.add(EngineArgs.nodeName(i));
            }
            s.putList("discovery.seed_hosts", seeds);
            s.putList(initialManagersKey, names);
        }
        // The wasm viewer may talk to the engine straight from the browser: allow the app's
        // origin(s) only, and only the methods the viewer uses to read (no PUT/DELETE).
        s.put("http.cors.enabled", true);
        s.put("http.cors.allow-origin", a.corsOrigin);
        s.put("http.cors.allow-credentials", true);
        s.put("http.cors.allow-headers", "Authorization, Content-Type, X-Requested-With, Content-Length, Accept");
        s.put("http.cors.allow-methods", "OPTIONS, HEAD, GET, POST");
        // A nearly full scratch disk must not turn indices read-only.
        s.put("cluster.routing.allocation.disk.threshold_enabled", false);
        s.put("action.auto_create_index", true);
        return s;
    }
}
