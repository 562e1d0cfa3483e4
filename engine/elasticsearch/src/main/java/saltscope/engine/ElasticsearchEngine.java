package saltscope.engine;

import static org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner.newConfigs;

import org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner;

/**
 * Runs one node of a real Elasticsearch 7.10 cluster in this JVM (codelibs'
 * elasticsearch-cluster-runner), for Saltscope development and tests; scripts/engine.sh starts one
 * such JVM per node. Arguments and lifecycle are shared with the OpenSearch launcher
 * ({@link EngineArgs}, {@link EngineMain}, {@link NodeSettings} in engine/common); this class holds
 * only what is Elasticsearch's own.
 */
public final class ElasticsearchEngine implements EngineMain.Product<ElasticsearchClusterRunner> {

    public static void main(final String[] args) throws Exception {
        EngineMain.run(args, new ElasticsearchEngine());
    }

    @Override
    public String name() {
        return "Elasticsearch";
    }

    @Override
    public NodeSettings settings(final EngineArgs a) {
        // The runner's default roles are master and data only; ingest too, as
        // every node of a default Elasticsearch install has it (the index
        // templates' summary pipeline needs an ingest node).
        return NodeSettings.common(a, "cluster.initial_master_nodes")
                .putList("node.roles", "master", "data", "ingest");
    }

    @Override
    public ElasticsearchClusterRunner runner(final EngineArgs a) {
        // The runner starts nodes 1..numOfNode; this JVM starts only a.node (home <base>/node_<a.node>).
        final ElasticsearchClusterRunner runner = new ElasticsearchClusterRunner() {
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
    public void start(final ElasticsearchClusterRunner runner, final EngineArgs a, final NodeSettings settings) {
        runner.onBuild((n, b) -> settings.applyTo(b::put, b::putList))
                .build(newConfigs().basePath(a.base).numOfNode(a.nodes).baseHttpPort(a.port - 1)
                        .clusterName(a.cluster).printOnFailure());
    }
}
