//! The MCP request handler of [`McpServer`](super::McpServer), on rmcp's typed seam
//! ([`ServerHandler`]): `tools/list` on the request's [`Context`](tool_core::Context), each
//! `tools/call` through [`Session::call`], and the `tasks/*` requests (M5).

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    Tool as McpTool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::catalog::listen;
use super::catalog::requests as catalog;
use super::malformed::custom_request_error;
use super::session::Session;
use super::tasks;
use super::tools_call::Caller;

/// Serves one session (stdio) or the requests of one HTTP session: each request adapted to
/// the session's steps, nothing decided here.
#[derive(Clone)]
pub(crate) struct Handler {
    session: Session,
}

impl Handler {
    /// The handler of `session`.
    pub(crate) fn new(session: Session) -> Self {
        Self { session }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.session.shared.info.clone()
    }

    /// The `tools/list` entry of the tool published as `name`, whoever asks: rmcp's HTTP
    /// transport reads its input schema to check a 2026-07-28 call's `Mcp-Param-*` headers
    /// against its arguments (M10), before the call is read, answering `400` to a header
    /// that contradicts the body or is not encoded as the protocol says. A tool the caller
    /// may not see is checked too: the headers are the request's, and its call is then
    /// refused as any call of a hidden tool (A5).
    fn get_tool(&self, name: &str) -> Option<McpTool> {
        let shared = &self.session.shared;
        (shared.by_name.get(name)).and_then(|&i| shared.listed.get(i).cloned())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let parts = cx.extensions.get::<http::request::Parts>();
        let ctx = self.session.request_context(parts).await?;
        let mut listed = Vec::new();
        let shared = &self.session.shared;
        // Q1: a deferred tool is listed only once a search loaded it for this caller.
        let loaded = (shared.deferred.as_ref())
            .map(|deferred| (deferred, deferred.loaded(&self.session.task_owner(&cx))));
        let unloaded = |at: usize| {
            loaded
                .as_ref()
                .is_some_and(|(deferred, loaded)| deferred.is_deferred(at) && !loaded.contains(&at))
        };
        // Declaration order, one policy at a time (A2). A tool left out is still guarded:
        // a call by its name goes through its policy again (A4, A5).
        for (at, (tool, entry)) in shared.set.tools.iter().zip(&shared.listed).enumerate() {
            if unloaded(at) {
                continue;
            }
            // Z3: a tool is offered only to a token that grants its scopes (or for step-up).
            if !crate::call::scopes::offers(tool, &ctx) {
                continue;
            }
            match tool.available(&ctx).await {
                Ok(true) => listed.push(entry.clone()),
                Ok(false) => {}
                Err(error) => {
                    tracing::error!(
                        tool = tool.name(),
                        error = %error,
                        "an availability policy failed while listing MCP tools; the list is refused"
                    );
                    return Err(ErrorData::internal_error(
                        "the tool list is unavailable",
                        None,
                    ));
                }
            }
        }
        // The list depends on who asks: no cache may keep it or share it.
        let mut result = ListToolsResult::with_all_items(listed).with_ttl_ms(0);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    /// `resources/list` (M7): the resources the caller is offered.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        catalog::list_resources(&self.session, &cx).await
    }

    /// `resources/templates/list` (M7): the resource templates the caller is offered.
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        catalog::list_resource_templates(&self.session, &cx).await
    }

    /// `resources/read` (M7).
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        catalog::read_resource(&self.session, request, &cx).await
    }

    /// `resources/subscribe` (M7, protocols before 2026-07-28).
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        catalog::subscribe(&self.session, &request.uri, &cx).await
    }

    /// `resources/unsubscribe` (M7, protocols before 2026-07-28).
    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        catalog::unsubscribe(&self.session, &request.uri, &cx);
        Ok(())
    }

    /// What a `subscriptions/listen` stream (2026-07-28, M7) is acknowledged of what it asked:
    /// tool list changes only where a search can load a deferred tool (Q1).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let tools_change = self.session.shared.deferred.is_some();
        Some(listen::accepted(requested, tools_change))
    }

    /// A `subscriptions/listen` stream, open until the client closes it (M7).
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        listen::serve(&self.session, subscription).await
    }

    /// `prompts/list` (M7): the prompts the caller is offered.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        catalog::list_prompts(&self.session, &cx).await
    }

    /// `prompts/get` (M7): the prompt, or (2026-07-28) its handler's question.
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        catalog::get_prompt(&self.session, request, &cx).await
    }

    /// `completion/complete` (M7): suggestions for a prompt's or a template's argument.
    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        catalog::complete(&self.session, request, &cx).await
    }

    /// `logging/setLevel` (M8): the level of the log messages this session's client gets.
    /// (rmcp marks logging deprecated: 2026-07-28 names a level per request instead.)
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.log_level.set(request.level);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        (self.session)
            .call(request, Caller::Service(&cx), &cx.ct)
            .await
    }

    /// `tasks/get` of the Tasks extension (SEP-2663, M5), on the tasks of the client that asks.
    async fn get_task(
        &self,
        request: GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task = tasks::get(
            &self.session.shared.tasks,
            &self.session.task_owner(&cx),
            &request.task_id,
        )?;
        Ok(GetTaskResult::new(task))
    }

    /// `tasks/cancel` of the Tasks extension: the task and its call's context cancelled; a
    /// task that already ended is acknowledged as it is (M9).
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(
            &self.session.shared.tasks,
            &self.session.task_owner(&cx),
            &request.task_id,
        )
    }

    /// `tasks/update` of the Tasks extension: answers to a task's questions (M9).
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::update(
            &self.session.shared.tasks,
            &self.session.task_owner(&cx),
            &request.task_id,
            &request.input_responses,
        )
    }

    /// A request rmcp could not read as one it knows: a method we do not serve, or one we
    /// serve with malformed params (`tools/call` without `name`, say), which is `-32602
    /// Invalid params` rather than rmcp's `-32601 Method not found`: the client learns that
    /// its request was wrong, not that the server lacks the method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // M5: the `tasks/*` requests, on the tasks of the client that asks.
        let owner = self.session.task_owner(&cx);
        if let Some(answer) =
            tasks::answer_method(&self.session.shared.tasks, &owner, &request, &cx.ct).await
        {
            return answer.map(CustomResult);
        }
        let error = custom_request_error(&request.method, request.params.as_ref());
        tracing::debug!(
            method = %tool_core::violation::preview_str(&request.method),
            code = error.code.0,
            message = %error.message,
            "an MCP request was refused: its method or params are not ones this server reads"
        );
        Err(error)
    }
}
