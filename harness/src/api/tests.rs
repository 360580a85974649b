use super::*;

#[test]
fn every_header_function_is_a_row_and_every_bindings_function_is_callable() {
    let t = table();
    if generated::HEADER.is_empty() {
        return; // the docs.rs build: no header to read
    }
    let header_rows = t.iter().filter(|f| !matches!(f.group.as_str(), "opengl" | "egl" | "vdpau")).count();
    // 13.0 declares 307 functions with a return list; 12.0, the oldest supported header, 287.
    let least = if header_version().is_some_and(|v| v >= 13000) { 300 } else { 280 };
    assert!(header_rows >= least, "{header_rows} functions from cuda_runtime_api.h");
    for f in t.iter().filter(|f| !matches!(f.group.as_str(), "opengl" | "egl" | "vdpau")) {
        assert!(f.callable.is_some(), "{} is in the header but not in the bindings", f.name);
    }
    // The interop headers add rows the bindings leave out, each with its platform.
    for group in ["opengl", "egl", "vdpau"] {
        let rows: Vec<_> = t.iter().filter(|f| f.group == group).collect();
        assert!(!rows.is_empty(), "no {group} rows");
        assert!(rows.iter().all(|f| f.platform == Some(group) && f.callable.is_none()));
    }
}

#[test]
fn parameters_are_classed_from_their_types_and_names() {
    let class = |f: &str, p: &str| {
        let row = function(f).unwrap_or_else(|| panic!("{f} not in the table"));
        row.params.iter().find(|q| q.name == p).unwrap_or_else(|| panic!("{f} has no {p}")).class.clone()
    };
    assert_eq!(class("cudaMalloc", "devPtr"), ParamClass::Out);
    assert_eq!(class("cudaMalloc", "size"), ParamClass::Size);
    assert_eq!(class("cudaMemcpy", "kind"), ParamClass::CopyKind);
    assert_eq!(class("cudaMemcpy", "dst"), ParamClass::Memory);
    assert_eq!(class("cudaSetDevice", "device"), ParamClass::Device);
    assert_eq!(class("cudaStreamCreateWithFlags", "flags"), ParamClass::Flags);
    assert_eq!(class("cudaStreamSynchronize", "stream"), ParamClass::Handle("cudaStream_t".into()));
    assert_eq!(class("cudaDeviceGetAttribute", "attr"), ParamClass::Enum("cudaDeviceAttr".into()));
    assert_eq!(class("cudaFuncGetAttributes", "func"), ParamClass::Function);
    assert_eq!(class("cudaGetSymbolSize", "symbol"), ParamClass::Symbol);
    assert_eq!(class("cudaMemset3D", "extent"), ParamClass::Struct("cudaExtent".into()));
    assert_eq!(class("cudaMemcpy3D", "p"), ParamClass::InStruct("cudaMemcpy3DParms".into()));
    assert_eq!(class("cudaLaunchHostFunc", "fn_"), ParamClass::Callback);
    // The handle a registration writes is an output (its type names a callback), passed on as `L.param`.
    // Async notifications entered the runtime in 12.4.
    if header_version().is_some_and(|v| v >= 12040) {
        assert_eq!(class("cudaDeviceRegisterAsyncNotification", "callbackFunc"), ParamClass::Callback);
        assert_eq!(class("cudaDeviceRegisterAsyncNotification", "callback"), ParamClass::Out);
        assert_eq!(
            class("cudaDeviceUnregisterAsyncNotification", "callback"),
            ParamClass::Handle("cudaAsyncCallbackHandle_t".into())
        );
    }
    assert_eq!(class("cudaUserObjectCreate", "destroy"), ParamClass::Callback);
    // Library management entered the runtime in 12.5.
    if header_version().is_some_and(|v| v >= 12050) {
        assert_eq!(class("cudaLibraryLoadFromFile", "fileName"), ParamClass::Text);
    }
    // A parameter's C spelling is what a reproducer declares.
    let p = &function("cudaStreamCreate").unwrap().params[0];
    assert_eq!(p.c_type, "cudaStream_t *");
    assert_eq!(p.pointee_size, std::mem::size_of::<cuda_sys::cudaStream_t>());
    assert_eq!(c_type("*mut f32"), "float *");
    assert_eq!(c_type("*const *const ::std::os::raw::c_void"), "const void * const *");
    assert_eq!(c_type("*mut *const ::std::os::raw::c_char"), "const char * *");
}

#[test]
fn constants_and_structs_come_from_the_bindings() {
    assert_eq!(constant("cudaMemcpyHostToDevice"), Some(("cudaMemcpyKind", 1)));
    assert_eq!(constant("cudaDevAttrWarpSize").map(|c| c.1), Some(10));
    let extent = structure("cudaExtent").expect("cudaExtent");
    assert_eq!(extent.size, 24);
    let names: Vec<_> = extent.fields.iter().map(|f| (f.name, f.offset, f.size)).collect();
    assert_eq!(names, [("width", 0, 8), ("height", 8, 8), ("depth", 16, 8)]);
}

#[test]
fn notes_and_doc_gaps_are_read_from_the_comments() {
    let malloc = function("cudaMalloc").unwrap();
    assert!(malloc.notes.contains(&"notefnerr") && malloc.notes.contains(&"note_init_rt"), "{:?}", malloc.notes);
    assert!(malloc.documented.contains(&"cudaErrorMemoryAllocation".to_owned()));
    assert!(!malloc.doc_gap);
    // cudaMemPoolGetAccess documents no return list in 13.0 (API-BREADTH §3).
    if let Some(f) = function("cudaMemPoolGetAccess") {
        assert!(f.doc_gap, "{:?}", f.documented);
    }
}

#[test]
fn an_output_whose_recorded_number_is_an_address_varies_between_runs() {
    assert!(output_varies("cudaMalloc", "devPtr", "*mut *mut ::std::os::raw::c_void"));
    // A struct's number is its first 8 bytes: a pointer there (cudaMemsetParams' dst, cudaPitchedPtr's ptr) varies.
    assert!(output_varies("cudaGraphMemsetNodeGetParams", "pNodeParams", "*mut cudaMemsetParams"));
    assert!(output_varies("cudaMalloc3D", "pitchedDevPtr", "*mut cudaPitchedPtr"));
    assert!(output_varies("cudaGraphKernelNodeGetParams", "pNodeParams", "*mut cudaKernelNodeParams"));
    // Sizes and counts do not.
    assert!(!output_varies("cudaArrayGetInfo", "extent", "*mut cudaExtent"));
    assert!(!output_varies("cudaGetDeviceCount", "count", "*mut ::std::os::raw::c_int"));
}

#[test]
fn fields_of_anonymous_unions_are_the_structs_own_as_in_c() {
    // cudaGraphNodeParams came with CUDA 12.2.
    let Some(params) = structure("cudaGraphNodeParams") else {
        assert!(header_version().is_some_and(|v| v < 12020), "no cudaGraphNodeParams in the bindings");
        return;
    };
    let (offset, memset) = field(params, "memset").expect("memset through __bindgen_anon_1");
    let anon = params.fields.iter().find(|f| f.name.starts_with("__bindgen_anon")).unwrap();
    assert_eq!((offset, memset.rust_type), (anon.offset, "cudaMemsetParamsV2"));
    assert!(field_names(params).contains(&"memset") && !field_names(params).iter().any(|n| n.starts_with("__")));
    assert!(field(params, "nope").is_none());
}

#[test]
fn a_char_output_is_a_text_and_a_pointer_to_one_is_not() {
    let pci = function("cudaDeviceGetPCIBusId").unwrap().callable.unwrap();
    let rust_type = pci.params.iter().find(|p| p.name == "pciBusId").unwrap().rust_type;
    assert!(is_text_output(rust_type), "{rust_type}");
    // cudaFuncGetName came with CUDA 12.3.
    if let Some(name) = function("cudaFuncGetName").and_then(|f| f.callable) {
        assert!(!is_text_output(name.params.iter().find(|p| p.name == "name").unwrap().rust_type));
    }
    assert!(!is_text_output("*mut ::std::os::raw::c_int"));
}

#[test]
fn a_typed_pointer_in_a_struct_argument_is_an_input_array() {
    // cudaExternalSemaphoreSignalNodeParams::extSemArray: the call reads the handles it points to, so a `L.param`
    // value passes a pointer to what L wrote (as an `in-array` parameter does), not L's bytes as the pointer.
    let layout = structure("cudaExternalSemaphoreSignalNodeParams").unwrap();
    let (_, array) = field(layout, "extSemArray").unwrap();
    assert_eq!(classify("", array.name, array.rust_type), ParamClass::Out);
    assert!(matches!(field_class(array.name, array.rust_type), ParamClass::InArray(_)), "{}", array.rust_type);
    // `void *` fields stay memory, by-value fields keep their class.
    let (_, count) = field(layout, "numExtSems").unwrap();
    assert_eq!(field_class(count.name, count.rust_type), classify("", count.name, count.rust_type));
    assert_eq!(field_class("devPtr", "*mut ::std::os::raw::c_void"), ParamClass::Memory);
}
